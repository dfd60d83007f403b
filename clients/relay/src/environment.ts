// Relay's environment for taskgraph, ready to use (relay-runtime 20, the
// documents compiled by relay-compiler 20 with ../relay.config.json):
//
//   const environment = createEnvironment({ url: 'https://…/query', headers: () => ({ Authorization: `Bearer ${token}` }) });
//
// - The network posts { query, variables, operationName } as JSON and reads
//   the answer (application/graphql-response+json, or application/json).
// - missingFieldHandlers: node(id:), project(id:), task(id:) and user(id:)
//   are answered from the store when it holds the object (ids are unique
//   across types), as Relay's docs recommend for node.
// - relay.config.json maps the scalars Date (YYYY-MM-DD) and Time (RFC
//   3339) to string in the generated types (customScalarTypes); the schema
//   it compiles against is the server's (schema.graphql, written by
//   scripts/clients from the server's introspection).
// - Tag implements Node: a tag's page is a @refetchable fragment on Tag,
//   paged with usePaginationFragment (TagPage.ts).
// - deleteTaskUpdater: with @deleteEdge, what a deleteTask mutation needs
//   (it answers the id only).
import {
  Environment,
  Network,
  ROOT_TYPE,
  RecordSource,
  Store,
  type FetchFunction,
  type GraphQLResponse,
  type MissingFieldHandler,
  type SelectorStoreUpdater,
} from 'relay-runtime';

/** What createEnvironment needs to reach the server. */
export interface EnvironmentOptions {
  /** The server's /query URL. */
  url: string;
  /** The headers of each request, e.g. the bearer token. */
  headers?: () => Record<string, string>;
  /** The fetch to use (the global one by default). */
  fetch?: typeof fetch;
}

/** The root fields that look an object up by id. */
const lookups = new Set(['node', 'project', 'task', 'user']);

/** missingFieldHandlers answers the lookups by id from the store. */
export const missingFieldHandlers: MissingFieldHandler[] = [
  {
    kind: 'linked',
    handle(field, record, args) {
      if (record != null && record.getType() === ROOT_TYPE && lookups.has(field.name) && typeof args.id === 'string') {
        return args.id;
      }
      return undefined;
    },
  },
];

/** createEnvironment returns a Relay environment for the server at url. */
export function createEnvironment({ url, headers, fetch: fetchImpl = fetch }: EnvironmentOptions): Environment {
  const fetchFn: FetchFunction = async (params, variables) => {
    const res = await fetchImpl(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/graphql-response+json, application/json', ...headers?.() },
      body: JSON.stringify({ query: params.text, variables, operationName: params.name }),
    });
    return (await res.json()) as GraphQLResponse;
  };
  return new Environment({ network: Network.create(fetchFn), store: new Store(new RecordSource()), missingFieldHandlers });
}

// The counter of TaskCounts a status is counted in.
const countOf: Record<string, string> = { TODO: 'todo', IN_PROGRESS: 'inProgress', DONE: 'done' };

/**
 * deleteTaskUpdater is the updater of a deleteTask mutation whose field
 * carries @deleteEdge(connections: …) (the edges): it takes the task out
 * of its project's counts (the project from the store, else projectId)
 * and deletes its record.
 */
export function deleteTaskUpdater(taskId: string, projectId?: string): SelectorStoreUpdater {
  return (store) => {
    const task = store.get(taskId);
    const status = task?.getValue('status');
    const project = task?.getLinkedRecord('project') ?? (projectId ? store.get(projectId) : null);
    const counts = project?.getLinkedRecord('taskCounts');
    if (counts && typeof status === 'string') {
      for (const name of ['total', countOf[status]]) {
        const n = counts.getValue(name);
        if (typeof n === 'number') counts.setValue(n - 1, name);
      }
    }
    store.delete(taskId);
  };
}
