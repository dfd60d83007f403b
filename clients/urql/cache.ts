// urql's normalized cache (graphcache 9, @urql/core 6) for taskgraph, ready
// to use:
//
//   import { Client, fetchExchange } from '@urql/core';
//   import { taskgraphCache } from './cache';
//   const client = new Client({ url, exchanges: [taskgraphCache(), fetchExchange], fetchOptions: … });
//
// What it configures, and why (each proven against the real server by
// clients/frontends/urql.ts, with graphcache's warnings failing):
//
// - schema: the server's, minified (schema.json, written by
//   scripts/clients): the cache then knows Node's types, which fields may be
//   null (partial results) and checks this configuration against them.
// - keys: TaskCounts, ProjectMember and ProjectEvent have no id; they are
//   kept inside their parent ("Invalid key" otherwise). Every other object
//   has an id, unique across types (globalIDs: the id alone is the key).
// - resolvers: every connection field pages with relayPagination(): select
//   `edges { cursor node { … } } pageInfo { … }`, then ask with `after:
//   pageInfo.endCursor` (forwards) or `last` and `before:
//   pageInfo.startCursor` (backwards); pages of one list (same filters)
//   are shown together. node(id:), project(id:), task(id:) and user(id:)
//   read what the cache holds by id first.
// - updates: deleteTask, deleteComment and deleteProject answer the id
//   only; their updaters take the object's edges out of every list the
//   cache holds, and adjust the counters it showed (the project's
//   taskCounts, the task's commentCount), without a refetch.
import { gql } from '@urql/core';
import { cacheExchange, type Cache, type CacheExchangeOpts, type KeyingConfig, type ResolverConfig, type UpdatesConfig } from '@urql/exchange-graphcache';
import { relayPagination } from '@urql/exchange-graphcache/extras';
import schema from './schema.json';

/** keys: the types without an id, kept inside their parent. */
export const keys: KeyingConfig = {
  TaskCounts: () => null,
  ProjectMember: () => null,
  ProjectEvent: () => null,
};

/** An object by id from the cache (globalIDs: its key is its id). */
const byID = (_parent: unknown, args: Record<string, unknown>) => (typeof args.id === 'string' ? args.id : null);

/** resolvers: pagination and reads by id. */
export const resolvers: ResolverConfig = {
  Query: {
    tasksByTag: relayPagination(),
    node: byID,
    project: byID,
    task: byID,
    user: byID,
  },
  User: {
    projects: relayPagination(),
    assignedTasks: relayPagination(),
    overdueTasks: relayPagination(),
  },
  Project: {
    tasks: relayPagination(),
  },
  Task: {
    comments: relayPagination(),
  },
  Tag: {
    tasks: relayPagination(),
  },
};

/** keysIn returns the entity keys in a (nested) list of links. */
const keysIn = (v: unknown): string[] => (Array.isArray(v) ? v.flatMap(keysIn) : typeof v === 'string' ? [v] : []);

/**
 * removeEdgesTo takes every edge (and `nodes` entry) whose node is the
 * entity key out of every list the cache holds, reached from the root
 * query; it returns the keys of the entities whose fields held those lists.
 */
export function removeEdgesTo(cache: Cache, key: string): Set<string> {
  const holders = new Set<string>();
  const seen = new Set<string>();
  const visit = (entity: string, parent: string) => {
    if (seen.has(entity)) return;
    seen.add(entity);
    for (const { fieldKey, fieldName } of cache.inspectFields(entity)) {
      const value = cache.resolve(entity, fieldKey);
      if (!Array.isArray(value)) {
        if (typeof value === 'string') visit(value, entity);
        continue;
      }
      const links = keysIn(value);
      if (fieldName === 'edges' || fieldName === 'nodes') {
        const kept = links.filter((l) => (fieldName === 'edges' ? cache.resolve(l, 'node') : l) !== key);
        if (kept.length !== links.length) {
          cache.link(entity, fieldKey, kept);
          holders.add(parent);
        }
        kept.forEach((l) => visit(l, entity));
      } else {
        links.forEach((l) => visit(l, entity));
      }
    }
  };
  visit('Query', 'Query');
  return holders;
}

/** adjust adds delta to the named counters of an embedded object (those the cache holds). */
function adjust(cache: Cache, owner: { __typename: string; id: string }, field: string, counters: string[], delta: number): void {
  const counts = cache.resolve(owner, field);
  if (typeof counts !== 'string') return;
  const known = counters.filter((c) => typeof cache.resolve(counts, c) === 'number');
  if (known.length === 0) return;
  const data: Record<string, number> = {};
  for (const c of known) data[c] = (cache.resolve(counts, c) as number) + delta;
  cache.writeFragment(gql(`fragment _ on ${owner.__typename} { id ${field} { ${known.join(' ')} } }`), { ...owner, [field]: { __typename: cache.resolve(counts, '__typename'), ...data } });
}

const countOf: Record<string, string> = { TODO: 'todo', IN_PROGRESS: 'inProgress', DONE: 'done' };

/** updates: the deletions, which answer an id only. */
export const updates: UpdatesConfig = {
  Mutation: {
    deleteTask(_result, args, cache) {
      const id = args.id as string;
      const status = cache.resolve(id, 'status');
      const project = cache.resolve(id, 'project');
      const holders = removeEdgesTo(cache, id);
      for (const p of new Set([...holders, ...(typeof project === 'string' ? [project] : [])])) {
        if (cache.resolve(p, '__typename') !== 'Project') continue;
        if (typeof status === 'string') {
          adjust(cache, { __typename: 'Project', id: p }, 'taskCounts', ['total', countOf[status]], -1);
        } else {
          cache.invalidate(p, 'taskCounts');
        }
      }
      cache.invalidate(id);
    },
    deleteComment(_result, args, cache) {
      const id = args.id as string;
      const task = cache.resolve(id, 'task');
      const holders = removeEdgesTo(cache, id);
      for (const t of new Set([...holders, ...(typeof task === 'string' ? [task] : [])])) {
        if (cache.resolve(t, '__typename') !== 'Task') continue;
        const n = cache.resolve(t, 'commentCount');
        if (typeof n === 'number') cache.writeFragment(gql`fragment _ on Task { id commentCount }`, { __typename: 'Task', id: t, commentCount: n - 1 });
      }
      cache.invalidate(id);
    },
    deleteProject(_result, args, cache) {
      removeEdgesTo(cache, args.id as string);
      cache.invalidate(args.id as string);
    },
  },
};

/** The options of taskgraphCache, for a cacheExchange of one's own. */
export const options: CacheExchangeOpts = { schema, keys, resolvers, updates, globalIDs: true };

/** taskgraphCache returns graphcache's exchange with taskgraph's configuration. */
export function taskgraphCache(extra: Partial<CacheExchangeOpts> = {}) {
  return cacheExchange({ ...options, ...extra });
}
