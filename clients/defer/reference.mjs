// The reference for @defer: graphql-js 17.1.0 (npm alias graphql17)
// executing a schema built from schema.graphqls whose resolvers return what
// taskgraph answered to the same query without @defer, and the corpus of
// queries (corpus.graphql) both run. Shared by differential.mjs (payloads
// compared) and run.mjs (clients fed both).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as g from 'graphql17';

const here = dirname(fileURLToPath(import.meta.url));

// The schema, with the @defer directive graphql-js's incremental
// execution needs declared.
const built = g.buildSchema(readFileSync(join(here, '..', '..', 'schema.graphqls'), 'utf8'));
export const schema = new g.GraphQLSchema({ ...built.toConfig(), directives: [...built.getDirectives(), g.GraphQLDeferDirective] });

// loadCorpus reads corpus.graphql: entries separated by a line
// "# --- name", each with "# key: value" lines (viewer, variables, about)
// before its document.
export function loadCorpus(file = join(here, 'corpus.graphql')) {
  const entries = [];
  for (const block of readFileSync(file, 'utf8').split(/^# --- /m).slice(1)) {
    const lines = block.split('\n');
    const entry = { name: lines[0].trim(), viewer: 'alice', variables: {}, about: '' };
    let i = 1;
    for (; i < lines.length && lines[i].startsWith('# '); i++) {
      const [, key, value] = /^# (\w+): (.*)$/.exec(lines[i]) ?? [];
      if (key === 'variables') entry.variables = JSON.parse(value);
      else if (key) entry[key] = value.trim();
    }
    entry.query = lines.slice(i).join('\n').trim();
    entries.push(entry);
  }
  return entries;
}

// ---------------------------------------------------------------- HTTP

// post sends a GraphQL request as viewer and returns the answer: its
// status, Content-Type and parts (one for a JSON body).
export async function post(cfg, viewer, body, accept = 'application/json') {
  const res = await fetch(cfg.url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: accept, Authorization: `Bearer ${cfg.tokens[viewer]}` },
    body: JSON.stringify(body),
  });
  const contentType = res.headers.get('content-type') ?? '';
  const text = await res.text();
  const parts = contentType.startsWith('multipart/mixed') ? multipartParts(contentType, text) : [JSON.parse(text)];
  return { status: res.status, contentType, parts };
}

// multipartParts reads a multipart/mixed body's JSON parts (a part's JSON
// has no line break, so no part holds a boundary line).
export function multipartParts(contentType, text) {
  const boundary = /boundary="?([^";]+)"?/.exec(contentType)?.[1] ?? '-';
  const parts = [];
  for (const seg of ('\r\n' + text).split(`\r\n--${boundary}`).slice(1)) {
    if (seg.startsWith('--')) break;
    const at = seg.indexOf('\r\n\r\n');
    if (at >= 0) parts.push(JSON.parse(seg.slice(at + 4)));
  }
  return parts;
}

// multipartBody writes payloads as a multipart/mixed body, as taskgraph
// does.
export function multipartBody(payloads) {
  return '---\r\n' + payloads.map((p) => `Content-Type: application/json\r\n\r\n${JSON.stringify(p)}\r\n---`).join('\r\n') + '--\r\n';
}

// resolveIds finds the ids of the demo data the corpus names in its
// variables ("@project:<name>", "@task:<title>"), as alice and carol see
// them.
export async function resolveIds(cfg) {
  const ids = {};
  for (const viewer of ['alice', 'carol']) {
    const { parts } = await post(cfg, viewer, {
      query: '{ me { projects(first: 20) { nodes { id name tasks(first: 50) { nodes { id title } } } } } }',
    });
    for (const p of parts[0].data.me.projects.nodes) {
      ids[`@project:${p.name}`] = p.id;
      for (const t of p.tasks.nodes) ids[`@task:${t.title}`] = t.id;
    }
  }
  return ids;
}

// bind replaces the corpus's id names in variables.
export const bind = (variables, ids) =>
  JSON.parse(JSON.stringify(variables), (_, v) => (typeof v === 'string' && v.startsWith('@') ? ids[v] ?? v : v));

// ---------------------------------------------------------------- documents

// withoutDefer is the document without any @defer (and the variables
// only they used): the same query, not deferred.
export function withoutDefer(doc) {
  const plain = g.visit(doc, { Directive: (node) => (node.name.value === 'defer' ? null : undefined) });
  const used = new Set();
  g.visit(plain, { VariableDefinition: () => false, Variable: (node) => void used.add(node.name.value) });
  return g.visit(plain, { VariableDefinition: (node) => (used.has(node.variable.name.value) ? undefined : null) });
}

// typeAlias selects each object's type under an alias of its own, which
// the reference's type resolver reads.
const typeAlias = '__tgTypename';
const withTypes = (doc) =>
  g.visit(doc, {
    SelectionSet: (node) => ({
      ...node,
      selections: [...node.selections, { kind: g.Kind.FIELD, alias: { kind: g.Kind.NAME, value: typeAlias }, name: { kind: g.Kind.NAME, value: '__typename' } }],
    }),
  });

// withoutFields is doc without the fields at the response-key paths keys
// (list positions left out), through fragments.
function withoutFields(doc, keys) {
  const fragments = new Map(doc.definitions.filter((d) => d.kind === g.Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]));
  const drop = new Set();
  const walk = (set, path) => {
    for (const sel of set?.selections ?? []) {
      if (sel.kind === g.Kind.FIELD) {
        const p = [...path, (sel.alias ?? sel.name).value];
        if (keys.has(p.join('.'))) drop.add(sel);
        else walk(sel.selectionSet, p);
      } else if (sel.kind === g.Kind.INLINE_FRAGMENT) walk(sel.selectionSet, path);
      else walk(fragments.get(sel.name.value)?.selectionSet, path);
    }
  };
  for (const d of doc.definitions) if (d.kind === g.Kind.OPERATION_DEFINITION) walk(d.selectionSet, []);
  return g.visit(doc, { Field: (node) => (drop.has(node) ? null : undefined) });
}

// ---------------------------------------------------------------- the source

// fill completes a with b where a has no value (a null left by an error's
// propagation).
function fill(a, b) {
  if (a == null) return b;
  if (Array.isArray(a) && Array.isArray(b)) return a.map((x, i) => fill(x, b[i]));
  if (typeof a === 'object' && b && typeof b === 'object') {
    const out = { ...a };
    for (const [k, v] of Object.entries(b)) out[k] = fill(a[k], v);
    return out;
  }
  return a;
}

// source asks taskgraph for what the reference's resolvers return: the
// query without @defer (each object's type selected too); where it has
// errors, the data their nulls took, from the query without the failing
// fields. Errors are thrown by the resolvers at their paths, with their
// message and code.
export async function source(cfg, entry, variables) {
  const plain = withTypes(withoutDefer(g.parse(entry.query)));
  const first = (await post(cfg, entry.viewer, { query: g.print(plain), variables })).parts[0];
  let data = first.data;
  const errors = first.errors ?? [];
  if (errors.length > 0) {
    const keys = new Set(errors.map((e) => e.path.filter((k) => typeof k === 'string').join('.')));
    const rest = (await post(cfg, entry.viewer, { query: g.print(withoutFields(plain, keys)), variables })).parts[0];
    data = fill(data, rest.data);
  }
  return { data, errors };
}

// ---------------------------------------------------------------- the reference

// execute runs query (a string) with variables on src with graphql-js 17:
// in graphql-js 17's format (experimentalExecuteIncrementally) or, legacy,
// the 2022-08-24 one (legacyExecuteIncrementally). It returns the
// payloads, the initial one first (one payload when nothing is deferred).
export async function execute(query, variables, src, legacy = false) {
  const thrown = new Map(src.errors.map((e) => [e.path.join('.'), e]));
  const fieldResolver = (parent, _args, _ctx, info) => {
    const e = thrown.get(g.responsePathAsArray(info.path).join('.'));
    if (e) throw new g.GraphQLError(e.message, { extensions: e.extensions });
    return parent?.[info.path.key];
  };
  const typeResolver = (value) => value?.[typeAlias];
  const document = g.parse(query);
  const invalid = g.validate(schema, document);
  if (invalid.length > 0) throw new Error(`graphql-js finds the query invalid: ${invalid.map((e) => e.message).join('; ')}`);
  const run = legacy ? g.legacyExecuteIncrementally : g.experimentalExecuteIncrementally;
  const result = await run({ schema, document, variableValues: variables, rootValue: src.data, fieldResolver, typeResolver });
  if (!('initialResult' in result)) return [JSON.parse(JSON.stringify(result))];
  const payloads = [result.initialResult];
  for await (const p of result.subsequentResults) payloads.push(p);
  return JSON.parse(JSON.stringify(payloads)); // GraphQLErrors as JSON
}
