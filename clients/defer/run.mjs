// @defer with the clients our users use: Apollo Client 4 (HttpLink with
// Defer20220824Handler, which asks for multipart/mixed;deferSpec=20220824,
// and with GraphQL17Alpha9Handler, which asks for
// multipart/mixed;incrementalSpec=v0.2: graphql-js 17's format) and
// graphql-sse (server-sent events). Each check: the first result lacks
// the deferred part, the last equals the same query without @defer.
//
// Run by TestDeferClients (defer_clients_test.go), which starts an instance
// and passes in LIVE_CONFIG its /query URL, a token, and the two queries
// (deferred, plain). Prints a {"plan": [names]} line, then one
// {"check", "ok", "detail"} line a check, as clients/live/run.mjs does.
import { ApolloClient, HttpLink, InMemoryCache, NetworkStatus, gql } from '@apollo/client';
import { Defer20220824Handler, GraphQL17Alpha9Handler } from '@apollo/client/incremental';
import { createClient } from 'graphql-sse';
import { isDeepStrictEqual } from 'node:util';

const cfg = JSON.parse(process.env.LIVE_CONFIG ?? '{}');
const WAIT_MS = cfg.waitMs ?? 20_000; // a failure guard, never a pace

class CheckError extends Error {}
const fail = (msg) => {
  throw new CheckError(msg);
};
const expect = (cond, msg) => {
  if (!cond) fail(msg);
};
const show = (v) => JSON.stringify(v)?.slice(0, 800);

// hasTasks reports whether any project of a dashboard result has its
// deferred tasks.
const hasTasks = (data) => (data?.me?.projects?.nodes ?? []).some((p) => p?.tasks?.nodes);

const withToken = (uri, init = {}) => {
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${cfg.token}`);
  return fetch(uri, { ...init, headers });
};

function apollo(Handler) {
  return new ApolloClient({
    link: new HttpLink({ uri: cfg.url, fetch: withToken }),
    cache: new InMemoryCache(),
    incrementalHandler: new Handler(),
  });
}

// guard rejects after WAIT_MS.
const guard = (p, what) =>
  Promise.race([p, new Promise((_, reject) => setTimeout(() => reject(new CheckError(`${what}: nothing within ${WAIT_MS} ms`)), WAIT_MS))]);

const checks = [];
const check = (name, fn) => checks.push({ name, fn });

for (const Handler of [Defer20220824Handler, GraphQL17Alpha9Handler]) {
  check(`Apollo Client 4 (HttpLink, ${Handler.name}): the first result lacks the deferred part, the last equals the query without @defer`, async () => {
    const plain = await apollo(Handler).query({ query: gql(cfg.plain), fetchPolicy: 'no-cache' });
    expect(!plain.error && hasTasks(plain.data), `the query without @defer: ${show(plain)}`);
    const client = apollo(Handler);
    const results = await guard(
      new Promise((resolve, reject) => {
        const results = [];
        const sub = client.watchQuery({ query: gql(cfg.deferred), fetchPolicy: 'network-only' }).subscribe({
          next: (r) => {
            if (r.loading && r.data === undefined) return; // the loading state before anything arrived
            results.push(r);
            // gqlgen's initial part has each deferred field null, so the
            // cache calls the first result complete: the stream's end is
            // the first result that is no longer loading.
            if (r.error || !r.loading) {
              sub.unsubscribe();
              resolve(results);
            }
          },
          error: reject,
        });
      }),
      'the deferred query',
    );
    const first = results[0];
    const last = results[results.length - 1];
    expect(results.length >= 2, `${results.length} results, want the initial one and the complete one: ${show(results.map(({ data, ...r }) => r))}`);
    expect(!last.error, `an error: ${show(last.error)}`);
    expect(first.networkStatus === NetworkStatus.streaming && first.data?.me?.name && !hasTasks(first.data), `the first result: ${show(first)}`);
    expect(last.networkStatus === NetworkStatus.ready && last.dataState === 'complete' && isDeepStrictEqual(last.data, plain.data),
      `the last result ${show(last.data)}\nthe query without @defer ${show(plain.data)}`);
    return `${results.length} results; the last has ${last.data.me.projects.nodes.length} projects with their tasks`;
  });
}

// mergeParts applies gqlgen's later parts ({data, path}, or {incremental:
// [{data, path}]}) to the first one's data.
function mergeParts(parts) {
  const data = structuredClone(parts[0].data);
  const apply = (path, add) => {
    let at = data;
    for (const k of path) at = at[k];
    Object.assign(at, add);
  };
  for (const p of parts.slice(1)) {
    if (p.path) apply(p.path, p.data);
    for (const inc of p.incremental ?? []) apply(inc.path, inc.data);
  }
  return data;
}

check('graphql-sse: the first event lacks the deferred part, the merged events equal the query without @defer', async () => {
  const client = createClient({ url: cfg.url, headers: { Authorization: `Bearer ${cfg.token}` }, retryAttempts: 0 });
  try {
    const collect = async (query) => {
      const parts = [];
      for await (const r of client.iterate({ query })) parts.push(r);
      return parts;
    };
    const [plain] = await guard(collect(cfg.plain), 'the query without @defer');
    expect(!plain.errors && hasTasks(plain.data), `the query without @defer: ${show(plain)}`);
    const parts = await guard(collect(cfg.deferred), 'the deferred query');
    expect(parts.length >= 2, `${parts.length} events: ${show(parts)}`);
    expect(parts.every((p) => !p.errors), `errors: ${show(parts)}`);
    expect(parts[0].hasNext === true && parts[0].data?.me?.name && !hasTasks(parts[0].data), `the first event: ${show(parts[0])}`);
    expect(parts[parts.length - 1].hasNext === false, `the last event: ${show(parts[parts.length - 1])}`);
    const merged = mergeParts(parts);
    expect(isDeepStrictEqual(merged, plain.data), `merged ${show(merged)}\nthe query without @defer ${show(plain.data)}`);
    return `${parts.length} events`;
  } finally {
    client.dispose();
  }
});

let failed = 0;
process.stdout.write(JSON.stringify({ plan: checks.map(({ name }) => name) }) + '\n');
for (const { name, fn } of checks) {
  try {
    process.stdout.write(JSON.stringify({ check: name, ok: true, detail: (await fn()) ?? '' }) + '\n');
  } catch (e) {
    failed++;
    process.stdout.write(JSON.stringify({ check: name, ok: false, detail: e instanceof CheckError ? e.message : String(e?.stack ?? show(e)) }) + '\n');
  }
}
process.exit(failed ? 1 : 0);
