// The differential test of @defer (TestDeferMatchesGraphQLJS): for each
// query of the corpus (corpus.graphql), what taskgraph sends over
// multipart/mixed in each format equals what graphql-js 17.1.0 sends for
// the same schema, document, variables and data (reference.mjs), up to
// what the format lets vary (compare.mjs): graphql-js 17's format
// (experimentalExecuteIncrementally) for incrementalSpec=v0.2, the
// 2022-08-24 one (legacyExecuteIncrementally) for deferSpec=20220824.
//
// LIVE_CONFIG: the instance's /query URL and a token per viewer. Prints a
// {"plan": [names]} line, then one {"check", "ok", "detail"} line a check,
// as clients/live/run.mjs does.
import { loadCorpus, resolveIds, bind, source, execute, post } from './reference.mjs';
import { canonicalV02, canonical20220824, differences, extensionRules } from './compare.mjs';

const cfg = JSON.parse(process.env.LIVE_CONFIG ?? '{}');
const only = cfg.only ? new RegExp(cfg.only) : null;
const corpus = loadCorpus().filter((e) => !only || only.test(e.name));

const formats = [
  { name: 'incrementalSpec=v0.2', accept: 'multipart/mixed;incrementalSpec=v0.2, application/json;q=0.9', legacy: false, canonical: canonicalV02 },
  { name: 'deferSpec=20220824', accept: 'multipart/mixed;deferSpec=20220824, application/json;q=0.9', legacy: true, canonical: canonical20220824 },
];

const checks = [];
for (const entry of corpus) for (const f of formats) checks.push({ name: `${entry.name} (${f.name})`, entry, f });
process.stdout.write(JSON.stringify({ plan: checks.map((c) => c.name) }) + '\n');

const ids = await resolveIds(cfg);
const sources = new Map();
let failed = 0;
for (const { name, entry, f } of checks) {
  let ok = false;
  let detail;
  try {
    const variables = bind(entry.variables, ids);
    if (!sources.has(entry)) sources.set(entry, await source(cfg, entry, variables));
    const want = await execute(entry.query, variables, sources.get(entry), f.legacy);
    const got = await post(cfg, entry.viewer, { query: entry.query, variables }, f.accept);
    const named = /(?:deferSpec|incrementalSpec)=[^;,\s]+/i.exec(got.contentType)?.[0];
    const diffs = [];
    if (got.status !== 200) diffs.push(`HTTP ${got.status}`);
    if (want.length > 1 && named !== f.name) diffs.push(`answered as ${got.contentType}`);
    diffs.push(...differences(f.canonical(got.parts), f.canonical(want)));
    diffs.push(...extensionRules(got.parts, want)); // the canonical forms leave extensions out
    ok = diffs.length === 0;
    detail = ok
      ? `${got.parts.length} payloads (graphql-js ${want.length})`
      : `${diffs.join('\n')}\n-- taskgraph:\n${got.parts.map((p) => JSON.stringify(p)).join('\n').slice(0, 4000)}\n-- graphql-js:\n${want.map((p) => JSON.stringify(p)).join('\n').slice(0, 4000)}`;
  } catch (e) {
    detail = String(e?.stack ?? e);
  }
  if (!ok) failed++;
  process.stdout.write(JSON.stringify({ check: name, ok, detail }) + '\n');
}
process.exit(failed ? 1 : 0);
