// Apollo Client 4's cache for taskgraph, ready to use:
//
//   import { createCache } from './cache';
//   const client = new ApolloClient({ link: new HttpLink({ uri, headers }), cache: createCache() });
//
// What it configures, and why (each proven against the real server by
// clients/frontends/apollo.ts, with Apollo's development warnings failing):
//
// - every connection field pages with relayStylePagination(): select
//   `edges { cursor node { … } } pageInfo { … }` (not `nodes`, which the
//   helper does not merge), then fetchMore with `after: pageInfo.endCursor`
//   (forwards) or `before: pageInfo.startCursor` with `last` (backwards).
//   Its key arguments are the list's filters, so one list is kept per
//   filter: a screen that reads a list from its start again (no cursor)
//   replaces what another screen paged in; give such a screen a list of its
//   own by a filter, or refetch.
// - TaskCounts (no id: embedded in its project) merges field by field, so
//   screens that show different counts share them without losing any
//   ("Cache data may be lost when replacing the taskCounts field").
// - Project.members and Task.tags are whole lists the server answers: the
//   incoming list replaces the cached one (no warning when one shrinks).
// - project(id:), task(id:) and user(id:) read what the cache holds by id
//   before asking the server (cache redirects).
// - possibleTypes: the Node interface's types, for fragments on Node.
// - deleteTaskFromCache: what a deleteTask mutation's update does (the
//   mutation answers the id only).
import { InMemoryCache, gql, type ApolloCache, type Reference, type TypePolicies } from '@apollo/client';
import { relayStylePagination } from '@apollo/client/utilities';

/** The types implementing each interface of the schema. */
export const possibleTypes: Record<string, string[]> = {
  Node: ['Comment', 'Project', 'Tag', 'Task', 'User'],
};

/** A root field's read of an object by id from the cache. */
const byID = (typename: string) => ({
  read(existing: unknown, { args, toReference }: { args: Record<string, any> | null; toReference: (o: { __typename: string; id: string }) => Reference | undefined }) {
    return existing ?? (typeof args?.id === 'string' ? toReference({ __typename: typename, id: args.id }) : undefined);
  },
});

/** The type policies: pagination, merges and cache redirects. */
export const typePolicies: TypePolicies = {
  Query: {
    fields: {
      tasksByTag: relayStylePagination(['tag']),
      project: byID('Project'),
      task: byID('Task'),
      user: byID('User'),
    },
  },
  User: {
    fields: {
      projects: relayStylePagination(),
      assignedTasks: relayStylePagination(),
      overdueTasks: relayStylePagination(['asOf']),
    },
  },
  Project: {
    fields: {
      tasks: relayStylePagination(['status']),
      members: { merge: false },
    },
  },
  Task: {
    fields: {
      comments: relayStylePagination(),
      tags: { merge: false },
    },
  },
  Tag: {
    fields: {
      tasks: relayStylePagination(),
    },
  },
  TaskCounts: { merge: true },
};

/** createCache returns an InMemoryCache with taskgraph's configuration. */
export function createCache(): InMemoryCache {
  return new InMemoryCache({ typePolicies, possibleTypes });
}

// The counter of TaskCounts a status is counted in.
const countOf = { TODO: 'todo', IN_PROGRESS: 'inProgress', DONE: 'done' } as const;

/**
 * deleteTaskFromCache removes a deleted task: from every list (its edges:
 * relayStylePagination reads past an edge whose node is gone) and from its
 * project's counts, without a refetch. Call it in deleteTask's update:
 *
 *   client.mutate({ mutation: DeleteTaskDocument, variables: { id },
 *     update: (cache) => deleteTaskFromCache(cache, id) })
 *
 * When the cache does not know the task's project or status, the counts of
 * projectId (if given) are dropped instead, to be read again.
 */
export function deleteTaskFromCache(cache: ApolloCache, id: string, projectId?: string): void {
  const task = cache.identify({ __typename: 'Task', id });
  if (!task) return;
  const known = cache.readFragment<{ status: keyof typeof countOf; project: { id: string } }>({
    id: task,
    fragment: gql`
      fragment DeletedTask on Task {
        status
        project {
          id
        }
      }
    `,
  });
  cache.evict({ id: task });
  const project = cache.identify({ __typename: 'Project', id: known?.project.id ?? projectId ?? '' });
  if (known && project) {
    const bucket = countOf[known.status];
    cache.modify({
      id: project,
      fields: {
        taskCounts(counts) {
          const next = { ...(counts as Record<string, number>) };
          if (typeof next.total === 'number') next.total--;
          if (typeof next[bucket] === 'number') next[bucket]--;
          return next;
        },
      },
    });
  } else if (project) {
    cache.evict({ id: project, fieldName: 'taskCounts' });
  }
  cache.gc();
}
