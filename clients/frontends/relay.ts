// Relay (relay-runtime 20, documents compiled by relay-compiler 20 from
// clients/relay/src, the environment of clients/relay/src/environment.ts)
// against the real server, in development mode (NODE_ENV=development:
// Relay's warnings on); run.ts fails a check on any of them. Screens read
// the store as React's hooks do (lookups of the queries' and fragments'
// selectors, the queries retained); pages are fetched as
// usePaginationFragment's loadNext and loadPrevious fetch them, with the
// pagination metadata relay-compiler wrote (getPaginationMetadata,
// getPaginationVariables).
import {
  commitMutation,
  createOperationDescriptor,
  fetchQuery,
  getPaginationMetadata,
  getPaginationVariables,
  getSelector,
  type Environment,
  type GraphQLTaggedNode,
  type OperationType,
  type ReaderFragment,
  type SingularReaderSelector,
} from 'relay-runtime';
import DashboardProjectBoardQuery, { type DashboardProjectBoardQuery as BoardQuery } from '../relay/src/__generated__/DashboardProjectBoardQuery.graphql';
import DashboardQuery, { type DashboardQuery as DashboardQueryType } from '../relay/src/__generated__/DashboardQuery.graphql';
import MutationsDeleteTaskMutation from '../relay/src/__generated__/MutationsDeleteTaskMutation.graphql';
import MutationsEditTaskMutation from '../relay/src/__generated__/MutationsEditTaskMutation.graphql';
import MutationsRemoveMemberMutation from '../relay/src/__generated__/MutationsRemoveMemberMutation.graphql';
import ProjectTasksQuery, { type ProjectTasksQuery as ProjectTasksQueryType } from '../relay/src/__generated__/ProjectTasksQuery.graphql';
import ProjectTasksFragment, { type ProjectTasks_project$data } from '../relay/src/__generated__/ProjectTasks_project.graphql';
import TagPageQuery, { type TagPageQuery as TagPageQueryType } from '../relay/src/__generated__/TagPageQuery.graphql';
import TagPageFragment, { type TagPage_tag$data } from '../relay/src/__generated__/TagPage_tag.graphql';
import TaskCardFragment, { type TaskCard_task$data } from '../relay/src/__generated__/TaskCard_task.graphql';
import { deleteTaskUpdater } from '../relay/src/environment';
import { relayEnvironment } from './clients';
import { makeFixture, projectCounts, projectTaskIDs, tagTaskIDs, type Fixture } from './fixture';
import { Requests, check, expect, guard, show } from './harness';
import { sameCounts } from './views';

// customScalarTypes: Date and Time are strings in the generated types, not
// any (tsc fails on an unused @ts-expect-error).
export const dueOf = (card: TaskCard_task$data): string | null | undefined => {
  // @ts-expect-error a Date is a string
  const wrong: number = card.dueDate;
  void wrong;
  return card.dueDate;
};

/** load fetches a query and retains it (as a screen's useLazyLoadQuery does); it returns its data's reader. */
async function load<T extends OperationType>(env: Environment, query: GraphQLTaggedNode, variables: T['variables'], what: string): Promise<() => T['response']> {
  await guard(fetchQuery<T>(env, query, variables).toPromise(), what);
  const op = createOperationDescriptor(query as never, variables);
  env.retain(op);
  return () => env.lookup(op.fragment).data as T['response'];
}

/** read reads a fragment from the store, as useFragment does. */
function read<T>(env: Environment, fragment: ReaderFragment, ref: unknown): T {
  return env.lookup(getSelector(fragment, ref as never) as SingularReaderSelector).data as T;
}

/** The connection of a pagination fragment's data, with the fields @connection adds. */
type Page = {
  __id?: string;
  edges: ReadonlyArray<{ node: { id: string } & object } | null>;
  pageInfo: { hasNextPage: boolean; endCursor: string | null; hasPreviousPage?: boolean; startCursor?: string | null };
};

/**
 * loadMore fetches the next page of a pagination fragment, in a direction,
 * as usePaginationFragment's loadNext / loadPrevious do; the connection
 * handler merges it into the connection the fragment reads.
 */
async function loadMore(env: Environment, fragment: ReaderFragment, ref: unknown, direction: 'forward' | 'backward', count: number): Promise<void> {
  const { paginationRequest, paginationMetadata, identifierField, connectionPathInFragmentData } = getPaginationMetadata(fragment, 'loadMore');
  const selector = getSelector(fragment, ref as never) as SingularReaderSelector;
  const data = env.lookup(selector).data as Record<string, unknown>;
  const conn = connectionPathInFragmentData.reduce<any>((v, k) => v?.[k], data) as Page;
  const cursor = direction === 'forward' ? conn.pageInfo.endCursor : conn.pageInfo.startCursor;
  const variables = getPaginationVariables(direction, count, cursor ?? null, { ...selector.owner.variables, ...selector.variables }, {}, paginationMetadata);
  if (identifierField) variables.id = data[identifierField];
  await guard(fetchQuery(env, paginationRequest, variables).toPromise(), `a page ${direction}`);
}

const cardsOf = (env: Environment, conn: Page | null | undefined): TaskCard_task$data[] =>
  (conn?.edges ?? []).flatMap((e) => (e?.node ? [read<TaskCard_task$data>(env, TaskCardFragment, e.node)] : []));
const idsOf = (conn: Page | null | undefined): string[] => (conn?.edges ?? []).flatMap((e) => (e?.node ? [e.node.id] : []));

let f: Fixture;

check('Relay: the fixture', async () => {
  f = await makeFixture('carol', 'dave', 'relay');
  return `project ${f.project}, ${f.tasks.length} tasks`;
});

check("Relay pages a project's tasks forwards to the end (loadNext), and backwards from the end (loadPrevious)", async () => {
  const want = await projectTaskIDs(f);
  const out: string[] = [];
  for (const dir of ['forward', 'backward'] as const) {
    const env = relayEnvironment('carol', new Requests());
    const vars = dir === 'forward' ? { id: f.project, first: 2, last: null } : { id: f.project, first: null, last: 2 };
    const root = await load<ProjectTasksQueryType>(env, ProjectTasksQuery, vars, `the first page ${dir}`);
    const ref = root().project;
    const conn = () => read<ProjectTasks_project$data>(env, ProjectTasksFragment, ref).tasks as unknown as Page;
    let pages = 1;
    for (;;) {
      const got = idsOf(conn());
      const expected = dir === 'forward' ? want.slice(0, got.length) : want.slice(want.length - got.length);
      expect(got.length === Math.min(2 * pages, want.length) && show(got) === show(expected), () => `${dir}, ${pages} pages: ${show(got)}, want ${show(expected)} of ${show(want)}`);
      if (!(dir === 'forward' ? conn().pageInfo.hasNextPage : conn().pageInfo.hasPreviousPage)) break;
      await loadMore(env, ProjectTasksFragment, ref, dir, 2);
      pages++;
    }
    expect(show(idsOf(conn())) === show(want), `${dir}: the fragment ends with ${show(idsOf(conn()))}`);
    out.push(`${pages} pages ${dir}`);
  }
  return out.join(', ');
});

check("Relay pages a tag's page: a @refetchable fragment on Tag, through node(id:), by a task card's tag id", async () => {
  const env = relayEnvironment('carol', new Requests());
  const board = await load<ProjectTasksQueryType>(env, ProjectTasksQuery, { id: f.project, first: 1, last: null }, 'a task card');
  const [card] = cardsOf(env, read<ProjectTasks_project$data>(env, ProjectTasksFragment, board().project).tasks as unknown as Page);
  const tagID = card?.tags.find((t) => t.name === f.tag)?.id;
  expect(tagID === `tag#${f.tag}`, `the card's tag id is ${tagID}`);
  const want = await tagTaskIDs(f);
  const root = await load<TagPageQueryType>(env, TagPageQuery, { id: tagID, first: 3 }, "the tag's first page");
  const ref = root().node;
  const conn = () => read<TagPage_tag$data>(env, TagPageFragment, ref).tasks as unknown as Page;
  let pages = 1;
  while (conn().pageInfo.hasNextPage) {
    await loadMore(env, TagPageFragment, ref, 'forward', 3);
    pages++;
  }
  const got = idsOf(conn());
  expect(pages === Math.ceil(want.length / 3) && show(got) === show(want), `${pages} pages: ${show(got)}, want pages of 3 of ${show(want)}`);
  expect(cardsOf(env, conn()).every((c) => typeof dueOf(c) === 'string'), 'a card without its due date');
  return `${pages} pages of ${got.length} tasks`;
});

/** The screens of one environment: the dashboard, the project's board, the tag's page. */
async function screens(env: Environment) {
  const dashboard = await load<DashboardQueryType>(env, DashboardQuery, {}, 'the dashboard');
  const board = await load<BoardQuery>(env, DashboardProjectBoardQuery, { id: f.project }, 'the board');
  const tag = await load<TagPageQueryType>(env, TagPageQuery, { id: `tag#${f.tag}`, first: 20 }, "the tag's page");
  return {
    project: () => dashboard().me.projects.edges?.map((e) => e?.node).find((p) => p?.id === f.project),
    board: () => board().project,
    tag: () => read<TagPage_tag$data>(env, TagPageFragment, tag().node).tasks as unknown as Page,
  };
}

check('Relay: a mutation updates every screen without a refetch', async () => {
  const requests = new Requests();
  const env = relayEnvironment('carol', requests);
  const s = await screens(env);
  const before = requests.names.length;
  const id = f.tasks[1]; // in progress
  const title = 'relay 2, done';
  await mutate(env, MutationsEditTaskMutation, { input: { id, status: 'DONE', title, tags: [f.tag] } }, 'EditTask');
  await mutate(env, MutationsRemoveMemberMutation, { projectId: f.project, userId: f.member }, 'RemoveMember');
  const counts = await projectCounts(f);
  const shows = (cards: TaskCard_task$data[]) => {
    const t = cards.find((c) => c.id === id);
    return t?.title === title && t.status === 'DONE' && show(t.tags.map((t) => t.name)) === show([f.tag]);
  };
  const p = s.project();
  const b = s.board();
  expect(shows(cardsOf(env, p?.tasks as unknown as Page)) && shows(cardsOf(env, s.tag())) && sameCounts(p?.taskCounts, counts) &&
    p?.members.length === 1 && sameCounts(b?.taskCounts, counts) && b?.members.length === 1,
    () => `the screens after the mutations: dashboard ${show(p)}, board ${show(b)}, tag ${show(cardsOf(env, s.tag()).find((c) => c.id === id))}; the server's counts ${show(counts)}`);
  expect(show(requests.since(before)) === show(['MutationsEditTaskMutation', 'MutationsRemoveMemberMutation']),
    () => `requests after the screens loaded: ${show(requests.since(before))}, want the mutations only`);
  return `dashboard, board and tag page updated; requests: ${requests.since(before).join(', ')}`;
});

/** mutate commits a mutation and waits for its answer. */
function mutate(env: Environment, mutation: GraphQLTaggedNode, variables: Record<string, unknown>, what: string, updater?: ReturnType<typeof deleteTaskUpdater>): Promise<unknown> {
  return guard(
    new Promise((resolve, reject) => {
      commitMutation(env, {
        mutation,
        variables,
        updater,
        onCompleted: (res, errors) => (errors?.length ? reject(new Error(`${what}: ${show(errors)}`)) : resolve(res)),
        onError: reject,
      });
    }),
    what,
  );
}

check('Relay: a deleted task leaves every screen (@deleteEdge), its counts follow, without a refetch', async () => {
  const requests = new Requests();
  const env = relayEnvironment('carol', requests);
  const s = await screens(env);
  const before = requests.names.length;
  const id = f.tasks[3];
  const dashboardTasks = s.project()?.tasks as unknown as Page;
  expect(idsOf(dashboardTasks).includes(id) && idsOf(s.tag()).includes(id), 'the task is not on the screens before');
  const connections = [dashboardTasks.__id, s.tag().__id];
  expect(connections.every((c) => typeof c === 'string'), `connection ids ${show(connections)}`);
  await mutate(env, MutationsDeleteTaskMutation, { id, connections }, 'DeleteTask', deleteTaskUpdater(id, f.project));
  const counts = await projectCounts(f);
  const want = (await projectTaskIDs(f)).filter((t) => t !== id);
  const p = s.project();
  expect(show(idsOf(p?.tasks as unknown as Page)) === show(want) && !idsOf(s.tag()).includes(id) && sameCounts(p?.taskCounts, counts) && sameCounts(s.board()?.taskCounts, counts),
    () => `after the delete: dashboard ${show(idsOf(p?.tasks as unknown as Page))} ${show(p?.taskCounts)}, tag ${show(idsOf(s.tag()))}; want ${show(want)} and ${show(counts)}`);
  expect(show(requests.since(before)) === show(['MutationsDeleteTaskMutation']), () => `requests after the screens loaded: ${show(requests.since(before))}, want the mutation only`);
  return `the task left the dashboard and the tag's page; counts ${show(counts)}; requests: ${requests.since(before).join(', ')}`;
});
