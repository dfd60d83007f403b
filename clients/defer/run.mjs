// @defer with the clients our users use, on the corpus (corpus.graphql):
// Apollo Client 4 (HttpLink, InMemoryCache) with Defer20220824Handler
// (multipart/mixed;deferSpec=20220824) and with GraphQL17Alpha9Handler
// (multipart/mixed;incrementalSpec=v0.2, graphql-js 17's format), urql
// (@urql/core's cache) with its own Accept (server-sent events) and asking
// for incrementalSpec=v0.2, and graphql-sse. Each check runs one query
// with one client against taskgraph and with the same library fed
// graphql-js 17.1.0's own payloads (reference.mjs): the first results are
// equal (the initial payload, without exactly the deferred fields), the
// last ones too, data and errors; for a query without errors, the last
// equals the query without @defer read by the same library; and nothing
// is printed (a console.warn or console.error fails the check).
//
// Run by TestDeferClients (defer_clients_test.go), which passes in
// LIVE_CONFIG an instance's /query URL and a token per viewer. Prints a
// {"plan": [names]} line, then one {"check", "ok", "detail"} line a check,
// as clients/live/run.mjs does.
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { Defer20220824Handler, GraphQL17Alpha9Handler } from '@apollo/client/incremental';
import { Client, cacheExchange, fetchExchange, gql as urqlGql } from '@urql/core';
import { createClient as sseClient } from 'graphql-sse';
import { isDeepStrictEqual } from 'node:util';
import { loadCorpus, resolveIds, bind, source, execute, multipartBody, withoutDefer } from './reference.mjs';
import * as g from 'graphql17';

const cfg = JSON.parse(process.env.LIVE_CONFIG ?? '{}');
const WAIT_MS = cfg.waitMs ?? 20_000; // a failure guard, never a pace
const only = cfg.only ? new RegExp(cfg.only) : null;
const corpus = loadCorpus().filter((e) => !only || only.test(e.name));

class CheckError extends Error {}
const show = (v) => JSON.stringify(v)?.slice(0, 1500);
const guard = (p, what) =>
  Promise.race([p, new Promise((_, reject) => setTimeout(() => reject(new CheckError(`${what}: nothing within ${WAIT_MS} ms`)), WAIT_MS))]);

// The warnings a client library prints fail the check that made them.
const printed = [];
for (const level of ['warn', 'error']) console[level] = (...args) => printed.push(`console.${level}: ${args.map(String).join(' ')}`);

// tracked wraps a fetch so that its caller can wait for every answer's
// body to be read to its end or cancelled (a client that leaves a body
// being read aborts it, and the abort fails a promise no one awaits).
function tracked(fetchFn) {
  const reads = [];
  const wrapped = async (uri, init) => {
    const res = await fetchFn(uri, init);
    let ended;
    reads.push(new Promise((resolve) => (ended = resolve)));
    const reader = res.body.getReader();
    const body = new ReadableStream({
      async pull(c) {
        const r = await reader.read().catch((e) => {
          ended();
          throw e;
        });
        if (r.done) {
          ended();
          c.close();
        } else c.enqueue(r.value);
      },
      cancel(reason) {
        ended();
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: res.status, headers: res.headers });
  };
  return { fetch: wrapped, ended: () => Promise.all(reads) };
}

// taskgraph's fetch, as viewer, with accept (the client's own if unset).
const live = (viewer, accept) => (uri, init) => {
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${cfg.tokens[viewer]}`);
  if (accept) headers.set('Accept', accept);
  return fetch(uri, { ...init, headers });
};

// reference answers any request the way graphql-js 17 does on src: in
// graphql-js 17's format, or legacy in the 2022-08-24 one.
const reference = (src, legacy) => async (_uri, init) => {
  const { query, variables } = JSON.parse(init.body);
  const payloads = await execute(query, variables ?? {}, src, legacy);
  if (payloads.length === 1) return new Response(JSON.stringify(payloads[0]), { headers: { 'content-type': 'application/json' } });
  const format = legacy ? 'deferSpec=20220824' : 'incrementalSpec=v0.2';
  return new Response(multipartBody(payloads), { headers: { 'content-type': `multipart/mixed;boundary="-";${format}` } });
};

// apollo returns the results of watching query with Handler over fetchFn
// until it is no longer loading.
async function apollo(Handler, fetchFn, query, variables) {
  const t = tracked(fetchFn);
  const client = new ApolloClient({ link: new HttpLink({ uri: cfg.url, fetch: t.fetch }), cache: new InMemoryCache(), incrementalHandler: new Handler() });
  let sub;
  try {
    const results = await guard(new Promise((resolve, reject) => {
      const results = [];
      sub = client.watchQuery({ query: gql(query), variables, fetchPolicy: 'network-only', errorPolicy: 'all' }).subscribe({
        next: (r) => {
          if (r.loading && r.data === undefined) return; // before anything arrived
          results.push({ data: r.data, errors: r.error ? String(r.error.message) : null });
          if (!r.loading) resolve(results);
        },
        error: reject,
      });
    }), 'Apollo Client');
    await guard(t.ended(), 'the end of the answer');
    return results;
  } finally {
    sub?.unsubscribe();
    client.stop();
  }
}

// urql returns the results of query over fetchFn (asking for accept, if
// set) until its last one.
async function urql(fetchFn, accept, query, variables) {
  const t = tracked(fetchFn);
  const client = new Client({ url: cfg.url, exchanges: [cacheExchange, fetchExchange], fetch: t.fetch, preferGetMethod: false,
    fetchOptions: accept ? { headers: { accept } } : {} });
  let sub;
  try {
    const results = await guard(new Promise((resolve) => {
      const results = [];
      sub = client.query(urqlGql(query), variables, { requestPolicy: 'network-only' }).subscribe((r) => {
        results.push({ data: r.data, errors: r.error ? r.error.graphQLErrors.map((e) => e.message).sort() : null });
        if (r.error?.networkError || (!r.hasNext && !r.stale)) resolve(results);
      });
    }), 'urql');
    await guard(t.ended(), 'the end of the answer');
    return results;
  } finally {
    sub?.unsubscribe();
  }
}

// sse returns what graphql-sse gets for query: the first event's data and
// errors, its later events (each one incremental result of the 2022-08-24
// format), and whether hasNext is false on the last one only.
async function sse(viewer, query, variables) {
  const client = sseClient({ url: cfg.url, headers: { Authorization: `Bearer ${cfg.tokens[viewer]}` }, retryAttempts: 0 });
  try {
    const parts = [];
    for await (const r of client.iterate({ query, variables })) parts.push(r);
    const errors = (parts[0].errors ?? []).map((e) => e.message).sort();
    const hasNext = parts.map((p, i) => (parts.length === 1 ? p.hasNext === undefined : p.hasNext === (i < parts.length - 1)));
    return { first: { data: parts[0].data, errors }, later: parts.slice(1), ordered: hasNext.every(Boolean) };
  } finally {
    client.dispose();
  }
}

// results reduces incremental results to what does not vary: each one's
// path, label and data, a result at the root one per root field (as
// server-sent events carry it), in order; and all their errors, in order.
function results(list) {
  const out = [];
  for (const r of list) {
    const path = r.path ?? [];
    if (path.length === 0 && r.data && typeof r.data === 'object') {
      for (const [k, v] of Object.entries(r.data)) out.push({ path: [k], label: r.label ?? null, data: v });
    } else out.push({ path, label: r.label ?? null, data: r.data });
  }
  const key = (v) => JSON.stringify(v);
  const errors = list.flatMap((r) => r.errors ?? []).map((e) => key([e.message, e.path]));
  return { results: out.map(key).sort(), errors: errors.sort() };
}

// plainQuery is query without @defer, its fragments renamed (graphql-tag
// warns of a fragment name met again with another text, in the whole
// process).
const plainQuery = (query) =>
  g.print(g.visit(withoutDefer(g.parse(query)), {
    FragmentDefinition: (node) => ({ ...node, name: { ...node.name, value: `Plain${node.name.value}` } }),
    FragmentSpread: (node) => ({ ...node, name: { ...node.name, value: `Plain${node.name.value}` } }),
  }));

const kinds = [
  { name: 'Apollo Client 4, Defer20220824Handler', run: (e, src, f) => apollo(Defer20220824Handler, f ?? reference(src, true), e.query, e.vars),
    live: (e) => live(e.viewer, undefined), plain: (e, q) => apollo(Defer20220824Handler, live(e.viewer), q, e.vars) },
  { name: 'Apollo Client 4, GraphQL17Alpha9Handler', run: (e, src, f) => apollo(GraphQL17Alpha9Handler, f ?? reference(src, false), e.query, e.vars),
    live: (e) => live(e.viewer, undefined), plain: (e, q) => apollo(GraphQL17Alpha9Handler, live(e.viewer), q, e.vars) },
  { name: 'urql, its own Accept (text/event-stream)', run: (e, src, f) => urql(f ?? reference(src, true), undefined, e.query, e.vars),
    live: (e) => live(e.viewer, undefined), plain: (e, q) => urql(live(e.viewer), undefined, q, e.vars) },
  { name: 'urql, multipart/mixed;incrementalSpec=v0.2', run: (e, src, f) => urql(f ?? reference(src, false), f ? 'multipart/mixed;incrementalSpec=v0.2' : undefined, e.query, e.vars),
    live: (e) => live(e.viewer, undefined), plain: (e, q) => urql(live(e.viewer), undefined, q, e.vars) },
];

const checks = [];
for (const entry of corpus) {
  for (const kind of kinds) checks.push({ name: `${entry.name}: ${kind.name}`, entry, kind });
  checks.push({ name: `${entry.name}: graphql-sse`, entry, kind: null });
}
process.stdout.write(JSON.stringify({ plan: checks.map((c) => c.name) }) + '\n');

const ids = await resolveIds(cfg);
const sources = new Map();
let failed = 0;
for (const { name, entry, kind } of checks) {
  printed.length = 0;
  let detail = '';
  const problems = [];
  try {
    const e = { ...entry, vars: bind(entry.variables, ids) };
    if (!sources.has(entry)) sources.set(entry, await source(cfg, entry, e.vars));
    const src = sources.get(entry);
    if (kind === null) {
      const got = await sse(entry.viewer, e.query, e.vars);
      const [initial, ...later] = await execute(e.query, e.vars, src, true);
      const first = { data: initial.data, errors: (initial.errors ?? []).map((x) => x.message).sort() };
      const [gotLater, wantLater] = [results(got.later), results(later.flatMap((p) => p.incremental ?? []))];
      if (!got.ordered) problems.push('hasNext not true on every event but the last');
      if (!isDeepStrictEqual(got.first, first)) problems.push(`the first event ${show(got.first)}\n graphql-js's ${show(first)}`);
      if (!isDeepStrictEqual(gotLater, wantLater)) problems.push(`the later events ${show(gotLater)}\n graphql-js's ${show(wantLater)}`);
      detail = `${got.later.length + 1} events`;
    } else {
      const got = await kind.run(e, src, kind.live(e));
      const want = await kind.run(e, src);
      const [gf, gl, wf, wl] = [got[0], got.at(-1), want[0], want.at(-1)];
      if (!isDeepStrictEqual(gf, wf)) problems.push(`the first result ${show(gf)}\n fed graphql-js's payloads ${show(wf)}`);
      if (!isDeepStrictEqual(gl, wl)) problems.push(`the last result ${show(gl)}\n fed graphql-js's payloads ${show(wl)}`);
      if (src.errors.length === 0) {
        const plain = (await kind.plain(e, plainQuery(e.query))).at(-1);
        if (!isDeepStrictEqual(gl.data, plain.data)) problems.push(`the last result ${show(gl.data)}\n the query without @defer ${show(plain.data)}`);
      }
      detail = `${got.length} results (fed graphql-js's payloads: ${want.length})`;
    }
  } catch (err) {
    problems.push(err instanceof CheckError ? err.message : String(err?.stack ?? err));
  }
  problems.push(...printed);
  if (problems.length > 0) failed++;
  process.stdout.write(JSON.stringify({ check: name, ok: problems.length === 0, detail: problems.length ? problems.join('\n') : detail }) + '\n');
}
process.exit(failed ? 1 : 0);
