// urql (@urql/core 6 with graphcache 9, configured by clients/urql/cache.ts)
// against the real server, in development mode (NODE_ENV=development:
// graphcache's warnings on); run.ts fails a check on any of them. The
// operations are the typed documents graphql-codegen makes from
// clients/operations.
import type { Client } from '@urql/core';
import { cacheExchange } from '@urql/exchange-graphcache';
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
} from '../ts/src/gql/graphql';
import { makeFixture, projectCounts, projectTaskIDs, tagTaskIDs, type Fixture } from './fixture';
import { fetchPage, loaded, urqlClient, watchUrql as watch } from './clients';
import { Requests, check, controlCheck, expect, guard, show, until } from './harness';
import { cardIn, cardOf, dashboardProject, idsOf, sameCounts, tagConn, type Conn } from './views';

let f: Fixture;

check('urql: the fixture', async () => {
  f = await makeFixture('bob', 'dave', 'urql');
  return `project ${f.project}, ${f.tasks.length} tasks`;
});

check("urql pages a project's tasks forwards to the end, and backwards from the end", async () => {
  const want = await projectTaskIDs(f);
  const out: string[] = [];
  for (const dir of ['forwards', 'backwards'] as const) {
    const client = urqlClient('bob', new Requests());
    const base = (dir === 'forwards' ? { id: f.project, first: 2 } : { id: f.project, last: 2 }) as ProjectTasksQueryVariables;
    const v = watch(client, ProjectTasksDocument, base);
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
      await fetchPage(client, ProjectTasksDocument, { ...base, ...cursor }, `page ${pages + 1} ${dir}`);
      pages++;
      await until(() => idsOf(v.data?.project?.tasks as Conn).length > got.length, `page ${pages} ${dir} in the first page's view`);
    }
    expect(show(idsOf(v.data?.project?.tasks as Conn)) === show(want), `${dir}: the view ends with ${show(idsOf(v.data?.project?.tasks as Conn))}`);
    out.push(`${pages} pages ${dir}`);
    v.stop();
  }
  return out.join(', ');
});

check("urql pages a tag's page, opened through node(id:) by a task card's tag id", async () => {
  const client = urqlClient('bob', new Requests());
  const board = watch(client, ProjectTasksDocument, { id: f.project, first: 1 } as ProjectTasksQueryVariables);
  const first = (await loaded(board, 'a task card')).project!.tasks.edges[0];
  const tagID = cardOf(first.node).tags.find((t) => t.name === f.tag)?.id;
  expect(tagID === `tag#${f.tag}`, `the card's tag id is ${tagID}`);
  const want = await tagTaskIDs(f);
  const v = watch(client, TagPageDocument, { id: tagID, first: 3 });
  await loaded(v, "the tag's first page");
  let pages = 1;
  while (tagConn(v.data)?.pageInfo.hasNextPage) {
    const n = idsOf(tagConn(v.data)).length;
    await fetchPage(client, TagPageDocument, { id: tagID, first: 3, after: tagConn(v.data)?.pageInfo.endCursor }, `page ${pages + 1}`);
    pages++;
    await until(() => idsOf(tagConn(v.data)).length > n, `page ${pages} in the first page's view`);
  }
  const got = idsOf(tagConn(v.data));
  expect(pages === Math.ceil(want.length / 3) && show(got) === show(want), `${pages} pages: ${show(got)}, want pages of 3 of ${show(want)}`);
  v.stop();
  board.stop();
  return `${pages} pages of ${got.length} tasks`;
});

/** The screens of one client: the dashboard, the project's board, the tag's page. */
async function screens(client: Client) {
  const dashboard = watch(client, DashboardDocument, {});
  const board = watch(client, ProjectBoardDocument, { id: f.project });
  const tag = watch(client, TagPageDocument, { id: `tag#${f.tag}`, first: 20 });
  await loaded(dashboard, 'the dashboard');
  await loaded(board, 'the board');
  await loaded(tag, "the tag's page");
  return { dashboard, board, tag, stop: () => [dashboard, board, tag].forEach((v) => v.stop()) };
}

check('urql: a mutation updates every screen without a refetch', async () => {
  const requests = new Requests();
  const client = urqlClient('bob', requests);
  const s = await screens(client);
  const before = requests.names.length;
  const id = f.tasks[1]; // in progress
  const title = 'urql 2, done';
  const version = cardIn(dashboardProject(s.dashboard.data, f)?.tasks, id)?.version;
  expect(version !== undefined, 'the task is not on the dashboard');
  // The board's move (its columns' counts), an edit (all counts, a tag less), a member less.
  const move = await guard(client.mutation(MoveTaskDocument, { id, status: 'DONE', expectedVersion: version }).toPromise(), 'MoveTask');
  expect(!move.error, () => `MoveTask: ${show(move.error)}`);
  const edit = await guard(client.mutation(EditTaskDocument, { input: { id, title, tags: [f.tag] } }).toPromise(), 'EditTask');
  expect(!edit.error, () => `EditTask: ${show(edit.error)}`);
  const remove = await guard(client.mutation(RemoveMemberDocument, { projectId: f.project, userId: f.member }).toPromise(), 'RemoveMember');
  expect(!remove.error, () => `RemoveMember: ${show(remove.error)}`);
  const counts = await projectCounts(f);
  const shows = (c: Conn | undefined) => {
    const t = cardIn(c, id);
    return t?.title === title && t.status === 'DONE' && show(t.tags.map((t) => t.name)) === show([f.tag]);
  };
  await until(() => {
    const p = dashboardProject(s.dashboard.data, f);
    const b = s.board.data?.project;
    return shows(p?.tasks) && shows(tagConn(s.tag.data)) && sameCounts(p?.taskCounts, counts) && p?.members.length === 1 &&
      sameCounts(b?.taskCounts, counts) && b?.members.length === 1;
  }, () => `the screens after the mutations: dashboard ${show(dashboardProject(s.dashboard.data, f))}, board ${show(s.board.data)}, tag ${show(cardIn(tagConn(s.tag.data), id))}; the server's counts ${show(counts)}`);
  expect(show(requests.since(before)) === show(['MoveTask', 'EditTask', 'RemoveMember']), () => `requests after the screens loaded: ${show(requests.since(before))}, want the three mutations only`);
  s.stop();
  return `dashboard, board and tag page updated; requests: ${requests.since(before).join(', ')}`;
});

check('urql: a deleted task leaves every screen, its counts follow, without a refetch', async () => {
  const requests = new Requests();
  const client = urqlClient('bob', requests);
  const s = await screens(client);
  const before = requests.names.length;
  const id = f.tasks[3];
  expect(idsOf(dashboardProject(s.dashboard.data, f)?.tasks).includes(id) && idsOf(tagConn(s.tag.data)).includes(id), 'the task is not on the screens before');
  const res = await guard(client.mutation(DeleteTaskDocument, { id }).toPromise(), 'DeleteTask');
  expect(!res.error && res.data?.deleteTask === id, `deleteTask answered ${show(res.data)} ${show(res.error)}`);
  const counts = await projectCounts(f);
  const want = (await projectTaskIDs(f)).filter((t) => t !== id);
  await until(() => {
    const p = dashboardProject(s.dashboard.data, f);
    return show(idsOf(p?.tasks)) === show(want) && !idsOf(tagConn(s.tag.data)).includes(id) &&
      sameCounts(p?.taskCounts, counts) && sameCounts(s.board.data?.project?.taskCounts, counts);
  }, () => `after the delete: dashboard ${show(dashboardProject(s.dashboard.data, f))}, tag ${show(idsOf(tagConn(s.tag.data)))}; want ${show(want)} and ${show(counts)}`);
  expect(show(requests.since(before)) === show(['DeleteTask']), () => `requests after the screens loaded: ${show(requests.since(before))}, want DeleteTask only`);
  s.stop();
  return `the task left the dashboard and the tag's page; counts ${show(counts)}; requests: ${requests.since(before).join(', ')}`;
});

// Last: Apollo Client and graphcache print each warning once a process.
controlCheck("graphcache without the configuration warns: no key for TaskCounts, ProjectMember", async (printed) => {
  const client = urqlClient('bob', new Requests(), { cache: cacheExchange({}) });
  const dashboard = watch(client, DashboardDocument, {});
  await loaded(dashboard, 'the dashboard');
  const want = ['TaskCounts', 'ProjectMember'];
  await until(() => want.every((w) => printed().some((p) => p.text.includes('Invalid key') && p.text.includes('`' + w + '`'))),
    () => `want graphcache's "Invalid key" for ${want.join(', ')}; it printed ${show(printed())}`);
  dashboard.stop();
  return `${printed().length} warnings, e.g. ${printed()[0]?.text.split('\n')[0]}`;
});
