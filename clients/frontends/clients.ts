// The libraries' clients as applications make them, with the
// configurations of clients/ (apollo/cache.ts, urql/cache.ts,
// relay/src/environment.ts), each request sent with a viewer's token and
// recorded (Requests), and a screen's view of a query: its latest data as
// the library delivers it. Files of checks (apollo.ts, urql.ts, relay.ts,
// defer.ts) build on these.
import {
  ApolloClient,
  HttpLink,
  type ApolloCache,
  type ObservableQuery,
  type OperationVariables,
  type TypedDocumentNode as ApolloDocument,
} from '@apollo/client';
import { loadDevMessages, loadErrorMessages } from '@apollo/client/dev';
import { Client, fetchExchange, type AnyVariables, type Exchange, type TypedDocumentNode as UrqlDocument } from '@urql/core';
import type { Environment } from 'relay-runtime';
import { createCache } from '../apollo/cache';
import { createEnvironment } from '../relay/src/environment';
import { taskgraphCache } from '../urql/cache';
import { Requests, cfg, expect, guard, show, until } from './harness';

// Apollo's development and error messages: its warnings as real text.
loadDevMessages();
loadErrorMessages();

/** A screen's view of a query: its latest complete data. */
export interface View<TData> {
  data: TData | undefined;
  error: unknown;
  stop(): void;
}

/** loaded waits for a view's first data (or error, which fails). */
export async function loaded<TData>(v: View<TData>, what: string): Promise<TData> {
  await until(() => v.data !== undefined || v.error !== undefined, what);
  expect(!v.error, () => `${what}: ${show(v.error)}`);
  return v.data as TData;
}

// ---------------------------------------------------------------- Apollo Client

/** Options of apolloClient beyond the configuration of clients/apollo. */
export interface ApolloOptions {
  /** The cache (createCache() by default). */
  cache?: ApolloCache;
  /** The handler of incremental results (@defer), e.g. Defer20220824Handler. */
  incrementalHandler?: ApolloClient.Options['incrementalHandler'];
}

/** apolloClient is a client as an application makes one: HttpLink with viewer's token, requests recorded. */
export function apolloClient(viewer: string, requests: Requests, o: ApolloOptions = {}): ApolloClient {
  return new ApolloClient({
    link: new HttpLink({ uri: cfg.url, fetch: requests.fetchAs(viewer) }),
    cache: o.cache ?? createCache(),
    ...(o.incrementalHandler ? { incrementalHandler: o.incrementalHandler } : {}),
  });
}

/** An Apollo view also holds its ObservableQuery (fetchMore, refetch). */
export interface ApolloView<TData, TVars extends OperationVariables> extends View<TData> {
  obs: ObservableQuery<TData, TVars>;
}

/** watchApollo watches a query as a screen does (watchQuery), keeping its latest complete data. */
export function watchApollo<TData, TVars extends OperationVariables>(client: ApolloClient, query: ApolloDocument<TData, TVars>, variables: TVars): ApolloView<TData, TVars> {
  const obs = client.watchQuery<TData, TVars>({ query, variables } as ObservableQuery.Options<TData, TVars>);
  const view: ApolloView<TData, TVars> = { obs, data: undefined, error: undefined, stop: () => sub.unsubscribe() };
  const sub = obs.subscribe({
    next: (r) => {
      if (r.error) view.error = r.error;
      if (r.dataState === 'complete') view.data = r.data as TData;
    },
    error: (e) => (view.error = e),
  });
  return view;
}

// ---------------------------------------------------------------- urql

/** Options of urqlClient beyond the configuration of clients/urql. */
export interface UrqlOptions {
  /** The cache exchange (taskgraphCache() by default). */
  cache?: Exchange;
  /** The Accept header of every request (urql's own by default). */
  accept?: string;
}

/** urqlClient is a client as an application makes one: the cache exchange, then fetch with viewer's token. */
export function urqlClient(viewer: string, requests: Requests, o: UrqlOptions = {}): Client {
  return new Client({
    url: cfg.url,
    exchanges: [o.cache ?? taskgraphCache(), fetchExchange],
    fetch: requests.fetchAs(viewer),
    ...(o.accept ? { fetchOptions: { headers: { accept: o.accept } } } : {}),
  });
}

/** watchUrql watches a query as a screen does, keeping its latest data. */
export function watchUrql<TData, TVars extends AnyVariables>(client: Client, query: UrqlDocument<TData, TVars>, variables: TVars): View<TData> {
  const view: View<TData> = { data: undefined, error: undefined, stop: () => sub.unsubscribe() };
  const sub = client.query(query, variables).subscribe((r) => {
    if (r.error) view.error = r.error;
    else if (r.data) view.data = r.data;
  });
  return view;
}

/** fetchPage asks for another page of a list; with relayPagination the watched first page shows the merged list. */
export async function fetchPage<TData, TVars extends AnyVariables>(client: Client, query: UrqlDocument<TData, TVars>, variables: TVars, what: string): Promise<void> {
  const r = await guard(client.query(query, variables).toPromise(), what);
  expect(!r.error, () => `${what}: ${show(r.error)}`);
}

// ---------------------------------------------------------------- Relay

/** relayEnvironment is an environment as an application makes one, its requests recorded. */
export function relayEnvironment(viewer: string, requests: Requests): Environment {
  return createEnvironment({ url: cfg.url, fetch: requests.fetchAs(viewer) });
}
