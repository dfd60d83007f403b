// @defer with the frontends' clients and their configured caches: Apollo
// Client 4 with each of its incremental handlers (Defer20220824Handler
// asks for multipart/mixed;deferSpec=20220824, GraphQL17Alpha9Handler for
// multipart/mixed;incrementalSpec=v0.2, graphql-js 17's format) and urql
// with graphcache (its own Accept, which the server answers over
// server-sent events, and multipart/mixed in each format when asked). Each
// check: the answer in the format asked for, the first result without the
// deferred part, the last one equal to the same query without @defer read
// by the same library, and no warning (harness.ts fails a check on any).
import { gql as apolloGql, NetworkStatus, type ApolloClient } from '@apollo/client';
import { Defer20220824Handler, GraphQL17Alpha9Handler } from '@apollo/client/incremental';
import { gql as urqlGql, type Client, type OperationResult } from '@urql/core';
import { isDeepStrictEqual } from 'node:util';
import { apolloClient, urqlClient } from './clients';
import { Requests, check, expect, guard, show } from './harness';

// The dashboard with each project's tasks deferred, and the same query
// with the fragment not deferred.
const deferred = `query DeferredDashboard {
  me { id name projects(first: 10) { edges { cursor node { id name members { role user { id name } }
    ... @defer(label: "tasks") { tasks(first: 5) { edges { cursor node { id title assignee { id name }
      comments(first: 3) { edges { cursor node { id body author { id name } } } pageInfo { hasNextPage endCursor } } } }
      pageInfo { hasNextPage endCursor } } } } } pageInfo { hasNextPage endCursor } } } }`;
const plain = deferred.replace('query DeferredDashboard', 'query PlainDashboard').replace('... @defer(label: "tasks") {', '... {');

type Project = { tasks?: { edges?: unknown[]; nodes?: unknown[] } | null };
type Dashboard = { me?: { projects?: { edges?: { node?: Project }[]; nodes?: Project[] } } };

/** projectsOf lists a dashboard's projects, read through edges or nodes. */
const projectsOf = (d: unknown): Project[] => {
  const p = (d as Dashboard | undefined)?.me?.projects;
  return p?.nodes ?? (p?.edges ?? []).map((e) => e.node ?? {});
};

/**
 * tasksOf counts the tasks (deferred) of a dashboard's projects. Before
 * they arrive, Apollo's relayStylePagination reads a project's tasks as an
 * empty connection.
 */
const tasksOf = (d: unknown): number => projectsOf(d).reduce((n, p) => n + (p.tasks?.edges?.length ?? p.tasks?.nodes?.length ?? 0), 0);

/** projects counts a dashboard's projects. */
const projects = (d: unknown): number => projectsOf(d).length;

// The query of issue 39, whose deferred tasks GraphQL17Alpha9Handler lost
// when the server answered nulls in their place: through nodes.
const issueDeferred = `query Deferred { me { id name projects(first: 10) { nodes { id name ... @defer {
  tasks(first: 20) { nodes { id title dueDate assignee { id name } tags { name } comments(first: 5) { nodes { id body author { id name } } } } } } } } } }`;
const issuePlain = issueDeferred.replace('query Deferred', 'query NotDeferred').replace('... @defer {', '... {');

/** format is the incremental format an answer's media type names, or the media type. */
function format(contentType: string): string {
  const named = /(deferSpec=[^;,\s]+|incrementalSpec=[^;,\s]+)/i.exec(contentType);
  return named ? `multipart/mixed;${named[1]}` : contentType.split(';')[0];
}

// ---------------------------------------------------------------- Apollo Client

/** A result of watchQuery, as the checks read it. */
interface ApolloResult {
  data: unknown;
  error?: unknown;
  loading: boolean;
  networkStatus: NetworkStatus;
  dataState: string;
}

/**
 * apolloResults watches the deferred dashboard until it is no longer
 * loading, and returns every result; the subscription ends once the
 * answer's body has been read (as urqlResults').
 */
async function apolloResults(client: ApolloClient, requests: Requests, query = deferred): Promise<ApolloResult[]> {
  let sub: { unsubscribe(): void } | undefined;
  try {
    const results = await guard(
      new Promise<ApolloResult[]>((resolve, reject) => {
        const results: ApolloResult[] = [];
        sub = client.watchQuery({ query: apolloGql(query), fetchPolicy: 'network-only' }).subscribe({
          next: (r) => {
            if (r.loading && r.data === undefined) return; // before anything arrived
            results.push(r);
            if (r.error || !r.loading) resolve(results);
          },
          error: reject,
        });
      }),
      'the deferred dashboard',
    );
    await guard(requests.allEnded(), 'the end of the answer');
    return results;
  } finally {
    sub?.unsubscribe();
  }
}

for (const [name, handler, want] of [
  ['Defer20220824Handler', () => new Defer20220824Handler(), 'multipart/mixed;deferSpec=20220824'],
  ['GraphQL17Alpha9Handler', () => new GraphQL17Alpha9Handler(), 'multipart/mixed;incrementalSpec=v0.2'],
] as const) {
  for (const [what, query, without] of [
    ['the deferred dashboard', deferred, plain],
    ["issue 39's query (through nodes)", issueDeferred, issuePlain],
  ] as const) {
    check(`Apollo Client with ${name}: ${what} (${want}), first without its tasks, last equal to the query without @defer`, async () => {
      const expected = await guard(apolloClient('alice', new Requests(), { incrementalHandler: handler() }).query({ query: apolloGql(without), fetchPolicy: 'network-only' }), 'the query without @defer');
      expect(!expected.error && tasksOf(expected.data) > 0, () => `the query without @defer: ${show(expected)}`);
      const requests = new Requests();
      const results = await apolloResults(apolloClient('alice', requests, { incrementalHandler: handler() }), requests, query);
      const first = results[0];
      const last = results[results.length - 1];
      expect(results.length >= 2, () => `${results.length} results, want the first and the complete one: ${show(results.map(({ data, ...r }) => r))}`);
      expect(!last.error, () => `an error: ${show(last.error)}`);
      expect(first.networkStatus === NetworkStatus.streaming && projects(first.data) > 0 && tasksOf(first.data) === 0,
        () => `the first result: ${show(first)}`);
      expect(last.networkStatus === NetworkStatus.ready && last.dataState === 'complete' && isDeepStrictEqual(last.data, expected.data),
        () => `the last result ${show(last.data)}\nthe query without @defer ${show(expected.data)}`);
      // The answer came in the format asked for.
      expect(show(requests.contentTypes.map(format)) === show([want]), () => `answered as ${show(requests.contentTypes)}, want ${want}`);
      return `${results.length} results; the last has the ${tasksOf(last.data)} tasks of ${projects(last.data)} projects`;
    });
  }
}

// ---------------------------------------------------------------- urql

/**
 * urqlResults runs query until its last result (hasNext false, not stale)
 * and returns every result. Its subscription ends once the answer's body
 * has been read to its end (requests.allEnded): urql aborts the fetch of a
 * subscription that ends while the body is still read, and the abort
 * rejects a promise no one awaits, which ends Node.
 */
async function urqlResults(client: Client, query: string, requests: Requests): Promise<OperationResult[]> {
  let sub: { unsubscribe(): void } | undefined;
  try {
    const results = await guard(
      new Promise<OperationResult[]>((resolve) => {
        const results: OperationResult[] = [];
        sub = client.query(urqlGql(query), {}, { requestPolicy: 'network-only' }).subscribe((r) => {
          results.push(r);
          if (r.error || (!r.hasNext && !r.stale)) resolve(results);
        });
      }),
      query.includes('@defer') ? 'the deferred dashboard' : 'the dashboard without @defer',
    );
    await guard(requests.allEnded(), 'the end of the answer');
    return results;
  } finally {
    sub?.unsubscribe();
  }
}

for (const [accept, want] of [
  [undefined, 'text/event-stream'],
  ['multipart/mixed', 'multipart/mixed;deferSpec=20220824'],
  ['multipart/mixed;incrementalSpec=v0.2', 'multipart/mixed;incrementalSpec=v0.2'],
] as const) {
  check(`urql with graphcache${accept ? ` accepting ${accept}` : ''}: the deferred dashboard (${want}), first without its tasks, last equal to the dashboard without @defer`, async () => {
    const plainRequests = new Requests();
    const [expected] = (await urqlResults(urqlClient('alice', plainRequests, accept ? { accept } : {}), plain, plainRequests)).slice(-1);
    expect(!expected.error && tasksOf(expected.data) > 0, () => `the dashboard without @defer: ${show(expected)}`);
    const requests = new Requests();
    const results = await urqlResults(urqlClient('alice', requests, accept ? { accept } : {}), deferred, requests);
    const first = results[0];
    const last = results[results.length - 1];
    expect(results.length >= 2, () => `${results.length} results, want the first and the complete one: ${show(results.map(({ data, operation, ...r }) => r))}`);
    expect(!last.error, () => `an error: ${show(last.error)}`);
    expect(first.hasNext && projects(first.data) > 0 && tasksOf(first.data) === 0, () => `the first result: ${show(first.data)}`);
    expect(isDeepStrictEqual(last.data, expected.data), () => `the last result ${show(last.data)}\nthe dashboard without @defer ${show(expected.data)}`);
    // The answer came in the format asked for.
    expect(show(requests.contentTypes.map(format)) === show([want]), () => `answered as ${show(requests.contentTypes)}, want ${want}`);
    return `${results.length} results; the last has the ${tasksOf(last.data)} tasks of ${projects(last.data)} projects`;
  });
}
