// The data each library's checks work on, made through the API as its
// viewer: a project of its own with a member and seven tasks, so that the
// libraries' checks do not see each other's changes.
import { post } from './harness';

export interface Fixture {
  viewer: string;
  /** The project's id. */
  project: string;
  /** The tag every task of the project has (the library's label). */
  tag: string;
  /** The tasks' ids by due date (the project's order). */
  tasks: string[];
  /** The member besides the viewer (removed by a check). */
  member: string;
}

/**
 * makeFixture creates, as viewer, the project "<label> board" with member
 * as a member and seven tasks due on seven days, assigned to the viewer,
 * tagged label and "extra", the second and fifth in progress.
 */
export async function makeFixture(viewer: string, member: string, label: string): Promise<Fixture> {
  const p = await post<{ createProject: { id: string } }>(
    viewer,
    `mutation($name: String!) { createProject(input: { name: $name }) { id } }`,
    { name: `${label} board` },
  );
  const project = p.createProject.id;
  await post(viewer, `mutation($p: ID!, $u: ID!) { addProjectMember(projectId: $p, userId: $u) { id } }`, { p: project, u: member });
  const tasks: string[] = [];
  for (let i = 1; i <= 7; i++) {
    const t = await post<{ createTask: { id: string } }>(
      viewer,
      `mutation($in: CreateTaskInput!) { createTask(input: $in) { id } }`,
      { in: { projectId: project, title: `${label} ${i}`, dueDate: `2027-03-0${i}`, assigneeId: viewer, tags: [label, 'extra'] } },
    );
    tasks.push(t.createTask.id);
    if (i === 2 || i === 5) {
      await post(viewer, `mutation($id: ID!) { updateTask(input: { id: $id, status: IN_PROGRESS }) { id } }`, { id: t.createTask.id });
    }
  }
  return { viewer, project, tag: label, tasks, member };
}

/** The project's tasks' ids in its order, read without any client. */
export async function projectTaskIDs(f: Fixture): Promise<string[]> {
  const d = await post<{ project: { tasks: { edges: { node: { id: string } }[] } } }>(
    f.viewer,
    `query($id: ID!) { project(id: $id) { tasks(first: 100) { edges { node { id } } } } }`,
    { id: f.project },
  );
  return d.project.tasks.edges.map((e) => e.node.id);
}

/** The tag's tasks' ids the viewer sees, in order, read without any client. */
export async function tagTaskIDs(f: Fixture): Promise<string[]> {
  const d = await post<{ tasksByTag: { edges: { node: { id: string } }[] } }>(
    f.viewer,
    `query($tag: String!) { tasksByTag(tag: $tag, first: 100) { edges { node { id } } } }`,
    { tag: f.tag },
  );
  return d.tasksByTag.edges.map((e) => e.node.id);
}

/** The project's counts, read without any client. */
export async function projectCounts(f: Fixture): Promise<{ total: number; todo: number; inProgress: number; done: number }> {
  const d = await post<{ project: { taskCounts: { total: number; todo: number; inProgress: number; done: number } } }>(
    f.viewer,
    `query($id: ID!) { project(id: $id) { taskCounts { total todo inProgress done } } }`,
    { id: f.project },
  );
  return d.project.taskCounts;
}

/** The ids of the schema's Node types, from its introspection. */
export async function nodeTypes(viewer: string): Promise<string[]> {
  const d = await post<{ __type: { possibleTypes: { name: string }[] } }>(viewer, `{ __type(name: "Node") { possibleTypes { name } } }`);
  return d.__type.possibleTypes.map((t) => t.name).sort();
}
