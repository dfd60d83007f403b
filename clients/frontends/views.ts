// What the screens of the Apollo and urql checks show, read from the typed
// results of clients/operations (graphql-codegen's documents; fragments
// are unmasked with useFragment, as application code does).
import { useFragment } from '../ts/src/gql/fragment-masking';
import { ProjectHeaderFragmentDoc, TaskCardFragmentDoc, type DashboardQuery, type TagPageQuery, type TaskCardFragment } from '../ts/src/gql/graphql';
import type { Fixture } from './fixture';

/** A connection as the screens select it. */
export type Conn = {
  edges: { cursor: string; node: unknown }[];
  pageInfo: { hasNextPage?: boolean; endCursor?: string | null; hasPreviousPage?: boolean; startCursor?: string | null };
};

/** cardOf reads a task card (TaskCard) from an edge's node. */
export const cardOf = (node: unknown): TaskCardFragment => useFragment(TaskCardFragmentDoc, node as never);

/** idsOf returns the ids of a connection's tasks, in order. */
export const idsOf = (c: Conn | undefined | null): string[] => (c?.edges ?? []).map((e) => cardOf(e.node).id);

/** cardIn returns the card of the task id in a connection. */
export const cardIn = (c: Conn | undefined | null, id: string): TaskCardFragment | undefined =>
  (c?.edges ?? []).map((e) => cardOf(e.node)).find((t) => t.id === id);

/** dashboardProject returns the fixture's project on a dashboard: its header and its tasks. */
export function dashboardProject(d: DashboardQuery | undefined | null, f: Fixture) {
  for (const { node } of d?.me.projects.edges ?? []) {
    const header = useFragment(ProjectHeaderFragmentDoc, node);
    if (header.id === f.project) return { ...header, tasks: node.tasks as Conn };
  }
  return undefined;
}

/** tagConn returns the tasks of a tag's page. */
export const tagConn = (d: TagPageQuery | undefined | null): Conn | undefined => (d?.node && 'tasks' in d.node ? d.node.tasks : undefined);

export type Counts = { total?: number; todo: number; inProgress: number; done: number };

/** sameCounts reports whether a screen's counts are the server's (those the screen shows). */
export const sameCounts = (got: Counts | undefined | null, want: Counts): boolean =>
  !!got && (got.total === undefined || got.total === want.total) && got.todo === want.todo && got.inProgress === want.inProgress && got.done === want.done;
