// Apollo Client 4 (InMemoryCache with clients/apollo/cache.ts) against the
// real server, in development mode (node --conditions=development: __DEV__
// on) with its development and error messages loaded, so that its warnings
// are real text; run.ts fails a check on any of them. The operations are
// the typed documents graphql-codegen makes from clients/operations.
import { InMemoryCache, type ApolloClient } from '@apollo/client';
import { __DEV__ } from '@apollo/client/utilities/environment';
import { deleteTaskFromCache, possibleTypes } from '../apollo/cache';
import {
  DashboardDocument,
  DeleteTaskDocument,
  EditTaskDocument,
  MoveTaskDocument,
  ProjectBoardDocument,
  ProjectTasksDocument,
  RemoveMemberDocument,
  TagPageDocument,
  type ProjectTasksQueryVariables,
  type TagPageQueryVariables,
} from '../ts/src/gql/graphql';
import { makeFixture, nodeTypes, projectCounts, projectTaskIDs, tagTaskIDs, type Fixture } from './fixture';
import { apolloClient, loaded, watchApollo as watch } from './clients';
import { Requests, check, controlCheck, expect, guard, show, until } from './harness';
import { cardIn, cardOf, dashboardProject, idsOf, sameCounts, tagConn, type Conn } from './views';

let f: Fixture;

check('Apollo Client: development mode with its messages; the fixture', async () => {
  expect(__DEV__ === true, '__DEV__ is off: run node with --conditions=development');
  expect(JSON.stringify(possibleTypes.Node) === JSON.stringify(await nodeTypes('alice')), () => `possibleTypes.Node ${show(possibleTypes.Node)} is not the schema's Node types`);
  f = await makeFixture('alice', 'dave', 'apollo');
  return `project ${f.project}, ${f.tasks.length} tasks`;
});

check("Apollo Client pages a project's tasks forwards to the end, and backwards from the end", async () => {
  const want = await projectTaskIDs(f);
  const out: string[] = [];
  for (const dir of ['forwards', 'backwards'] as const) {
    const client = apolloClient('alice', new Requests());
    const v = watch(client, ProjectTasksDocument, (dir === 'forwards' ? { id: f.project, first: 2 } : { id: f.project, last: 2 }) as ProjectTasksQueryVariables);
    await loaded(v, `the first page ${dir}`);
    let pages = 1;
    for (;;) {
      const conn = v.data?.project?.tasks as Conn;
      const got = idsOf(conn);
      const expected = dir === 'forwards' ? want.slice(0, got.length) : want.slice(want.length - got.length);
      expect(got.length === Math.min(2 * pages, want.length) && show(got) === show(expected), () => `${dir}, ${pages} pages: ${show(got)}, want ${show(expected)} of ${show(want)}`);
      const more = dir === 'forwards' ? conn.pageInfo.hasNextPage : conn.pageInfo.hasPreviousPage;
      if (!more) break;
      const cursor = dir === 'forwards' ? { after: conn.pageInfo.endCursor } : { before: conn.pageInfo.startCursor };
      await guard(v.obs.fetchMore({ variables: cursor }), `page ${pages + 1} ${dir}`);
      pages++;
      await until(() => idsOf(v.data?.project?.tasks as Conn).length > got.length, `page ${pages} ${dir} in the view`);
    }
    expect(show(idsOf(v.data?.project?.tasks as Conn)) === show(want), `${dir}: the view ends with ${show(idsOf(v.data?.project?.tasks as Conn))}`);
    out.push(`${pages} pages ${dir}`);
    v.stop();
  }
  return out.join(', ');
});

check("Apollo Client pages a tag's page, opened through node(id:) by a task card's tag id", async () => {
  const client = apolloClient('alice', new Requests());
  const board = watch(client, ProjectTasksDocument, { id: f.project, first: 1 } as ProjectTasksQueryVariables);
  const first = (await loaded(board, 'a task card')).project!.tasks.edges[0];
  const tagID = cardOf(first.node).tags.find((t) => t.name === f.tag)?.id;
  expect(tagID === `tag#${f.tag}`, `the card's tag id is ${tagID}`);
  const want = await tagTaskIDs(f);
  const v = watch(client, TagPageDocument, { id: tagID, first: 3 } as TagPageQueryVariables);
  await loaded(v, "the tag's first page");
  let pages = 1;
  while (tagConn(v.data)?.pageInfo.hasNextPage) {
    const n = idsOf(tagConn(v.data) as Conn).length;
    await guard(v.obs.fetchMore({ variables: { after: tagConn(v.data)?.pageInfo.endCursor } }), `page ${pages + 1}`);
    pages++;
    await until(() => idsOf(tagConn(v.data) as Conn).length > n, `page ${pages} in the view`);
  }
  const got = idsOf(tagConn(v.data) as Conn);
  expect(pages === Math.ceil(want.length / 3) && show(got) === show(want), `${pages} pages: ${show(got)}, want pages of 3 of ${show(want)}`);
  v.stop();
  board.stop();
  return `${pages} pages of ${got.length} tasks`;
});

/** The screens of one client: the dashboard, the project's board, the tag's page. */
async function screens(client: ApolloClient, tagID: string) {
  const dashboard = watch(client, DashboardDocument, {});
  const board = watch(client, ProjectBoardDocument, { id: f.project });
  const tag = watch(client, TagPageDocument, { id: tagID, first: 20 } as TagPageQueryVariables);
  await loaded(dashboard, 'the dashboard');
  await loaded(board, 'the board');
  await loaded(tag, "the tag's page");
  return { dashboard, board, tag, stop: () => [dashboard, board, tag].forEach((v) => v.stop()) };
}

check('Apollo Client: a mutation updates every screen without a refetch', async () => {
  const requests = new Requests();
  const client = apolloClient('alice', requests);
  const s = await screens(client, `tag#${f.tag}`);
  const before = requests.names.length;
  const id = f.tasks[1]; // in progress
  const title = 'apollo 2, done';
  const version = cardIn(dashboardProject(s.dashboard.data, f)?.tasks, id)?.version;
  expect(version !== undefined, 'the task is not on the dashboard');
  // The board's move (its columns' counts), an edit (all counts, a tag less), a member less.
  await guard(client.mutate({ mutation: MoveTaskDocument, variables: { id, status: 'DONE', expectedVersion: version } }), 'MoveTask');
  await guard(client.mutate({ mutation: EditTaskDocument, variables: { input: { id, title, tags: [f.tag] } } }), 'EditTask');
  await guard(client.mutate({ mutation: RemoveMemberDocument, variables: { projectId: f.project, userId: f.member } }), 'RemoveMember');
  const counts = await projectCounts(f);
  const card = (c: Conn | undefined) => cardIn(c, id);
  const shows = (c: Conn | undefined) => {
    const t = card(c);
    return t?.title === title && t.status === 'DONE' && show(t.tags.map((t) => t.name)) === show([f.tag]);
  };
  await until(() => {
    const p = dashboardProject(s.dashboard.data, f);
    const b = s.board.data?.project;
    return shows(p?.tasks as Conn) && shows(tagConn(s.tag.data) as Conn) &&
      sameCounts(p?.taskCounts, counts) && p?.taskCounts.total !== undefined && p.members.length === 1 &&
      sameCounts(b?.taskCounts, counts) && b?.members.length === 1;
  }, () => `the screens after the mutations: dashboard ${show(dashboardProject(s.dashboard.data, f))}, board ${show(s.board.data)}, tag ${show(card(tagConn(s.tag.data) as Conn))}; the server's counts ${show(counts)}`);
  expect(show(requests.since(before)) === show(['MoveTask', 'EditTask', 'RemoveMember']), () => `requests after the screens loaded: ${show(requests.since(before))}, want the three mutations only`);
  s.stop();
  return `dashboard, board and tag page updated; requests: ${requests.since(before).join(', ')}`;
});

check('Apollo Client: a deleted task leaves every screen, its counts follow, without a refetch', async () => {
  const requests = new Requests();
  const client = apolloClient('alice', requests);
  const s = await screens(client, `tag#${f.tag}`);
  const before = requests.names.length;
  const id = f.tasks[3];
  expect(idsOf(dashboardProject(s.dashboard.data, f)?.tasks as Conn).includes(id) && idsOf(tagConn(s.tag.data) as Conn).includes(id), 'the task is not on the screens before');
  const res = await guard(client.mutate({ mutation: DeleteTaskDocument, variables: { id }, update: (cache) => deleteTaskFromCache(cache, id) }), 'DeleteTask');
  expect(res.data?.deleteTask === id, `deleteTask answered ${show(res)}`);
  const counts = await projectCounts(f);
  const want = (await projectTaskIDs(f)).filter((t) => t !== id);
  await until(() => {
    const p = dashboardProject(s.dashboard.data, f);
    return show(idsOf(p?.tasks as Conn)) === show(want) && !idsOf(tagConn(s.tag.data) as Conn).includes(id) &&
      sameCounts(p?.taskCounts, counts) && sameCounts(s.board.data?.project?.taskCounts, counts);
  }, () => `after the delete: dashboard ${show(dashboardProject(s.dashboard.data, f))}, tag ${show(idsOf(tagConn(s.tag.data) as Conn))}; want ${show(want)} and ${show(counts)}`);
  expect(show(requests.since(before)) === show(['DeleteTask']), () => `requests after the screens loaded: ${show(requests.since(before))}, want DeleteTask only`);
  s.stop();
  return `the task left the dashboard and the tag's page; counts ${show(counts)}; requests: ${requests.since(before).join(', ')}`;
});

// Last: Apollo Client and graphcache print each warning once a process.
controlCheck('Apollo Client without the type policies warns that cache data may be lost (taskCounts, tags, members)', async (printed) => {
  const g = await makeFixture('alice', 'dave', 'apollo-bare');
  const requests = new Requests();
  const client = apolloClient('alice', requests, { cache: new InMemoryCache() });
  const dashboard = watch(client, DashboardDocument, {});
  await loaded(dashboard, 'the dashboard');
  const board = watch(client, ProjectBoardDocument, { id: g.project });
  await loaded(board, 'the board');
  await guard(client.mutate({ mutation: EditTaskDocument, variables: { input: { id: g.tasks[0], tags: [g.tag] } } }), 'EditTask');
  await guard(client.mutate({ mutation: RemoveMemberDocument, variables: { projectId: g.project, userId: g.member } }), 'RemoveMember');
  const want = ['taskCounts field of a Project object', 'tags field of a Task object', 'members field of a Project object'];
  await until(() => want.every((w) => printed().some((p) => p.text.includes('Cache data may be lost when replacing the ' + w))),
    () => `want Apollo's warnings on ${want.join(', ')}; it printed ${show(printed())}`);
  dashboard.stop();
  board.stop();
  return `${printed().length} warnings, e.g. ${printed()[0]?.text.split('\n')[0]}`;
});
