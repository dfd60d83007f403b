// A few lines of frontend code written against the generated types, checked
// by `tsc --strict --noEmit` (scripts/clients). A field renamed or removed in
// the schema or an operation breaks this file's compilation.
import { useFragment, type FragmentType } from './gql/fragment-masking';
import {
  DashboardDocument,
  MoveTaskDocument,
  ProjectHeaderFragmentDoc,
  TaskCardFragmentDoc,
  TasksByTagDocument,
  type CommentThreadQuery,
  type CommentThreadQueryVariables,
  type DashboardQuery,
  type MoveTaskMutationVariables,
  type TaskStatus,
  type TasksByTagQuery,
  type TasksByTagQueryVariables,
} from './gql/graphql';

/** One line of a task card: title, status, due date, assignee, tags and its comment count. */
export function taskLine(card: FragmentType<typeof TaskCardFragmentDoc>): string {
  const t = useFragment(TaskCardFragmentDoc, card);
  const due: string = t.dueDate ?? 'no due date';
  const who: string = t.assignee?.name ?? 'unassigned';
  const tags: string = t.tags.map((tag) => `#${tag.name}`).join(' ');
  const tagIds: string[] = t.tags.map((tag) => tag.id); // a tag's page: TagPage(id)
  const comments: number = t.commentCount;
  return `[${t.status}] ${t.title} (due ${due}, ${who}) ${tags} [${tagIds.join(',')}] v${t.version}, ${comments} comment(s)`;
}

/** The dashboard as text: each project with its members and first tasks. */
export function dashboardLines(data: DashboardQuery): string[] {
  const lines: string[] = [`${data.me.name} <${data.me.email ?? 'hidden'}>`];
  for (const { node: project } of data.me.projects.edges) {
    const header = useFragment(ProjectHeaderFragmentDoc, project);
    const owners = header.members.filter((m) => m.role === 'OWNER').map((m) => m.user.name);
    const c = header.taskCounts;
    lines.push(`${header.name} (owner ${header.owner.name}; ${owners.length} owner(s), ${header.members.length} member(s))`);
    lines.push(`  ${c.todo} to do · ${c.inProgress} in progress · ${c.done} done (${c.total})`);
    for (const { node: task } of project.tasks.edges) {
      const comments = task.comments.edges.map(({ node: c }) => `${c.author.name}: ${c.body} @ ${c.createdAt}`);
      lines.push(`  ${taskLine(task)}${comments.length > 0 ? ` — ${comments.join('; ')}` : ''}`);
    }
    if (project.tasks.pageInfo.hasNextPage) {
      const more: string | null = project.tasks.pageInfo.endCursor;
      lines.push(`  … more after ${more ?? ''}`);
    }
  }
  lines.push(`assigned: ${data.me.assignedTasks.edges.length}, overdue: ${data.me.overdueTasks.edges.length}`);
  return lines;
}

/** The variables of the next page of a tag's tasks, or null after the last. */
export function nextTagPage(tag: string, page: TasksByTagQuery): TasksByTagQueryVariables | null {
  const { hasNextPage, endCursor } = page.tasksByTag.pageInfo;
  if (!hasNextPage || endCursor === null) {
    return null;
  }
  return { tag, first: 20, after: endCursor };
}

/**
 * The variables of the older comments above a thread's page (read
 * newest first with last/before), or null when the page is the oldest.
 */
export function olderComments(task: string, page: CommentThreadQuery): CommentThreadQueryVariables | null {
  const comments = page.task?.comments;
  if (!comments?.pageInfo.hasPreviousPage || comments.pageInfo.startCursor === null) {
    return null;
  }
  return { task, last: 20, before: comments.pageInfo.startCursor };
}

/** Moves a task to a column, guarded by the version the card shows. */
export function moveVariables(card: FragmentType<typeof TaskCardFragmentDoc>, status: TaskStatus): MoveTaskMutationVariables {
  const t = useFragment(TaskCardFragmentDoc, card);
  return { id: t.id, status, expectedVersion: t.version };
}

/**
 * The request body a client sends for an operation in trusted-documents
 * mode: the manifest's hash instead of the document text.
 */
export function persistedRequest(
  doc: typeof DashboardDocument | typeof TasksByTagDocument | typeof MoveTaskDocument,
  variables: Record<string, unknown>,
): { documentId: string; variables: Record<string, unknown> } {
  const meta = (doc as unknown as { __meta__?: { hash?: string } }).__meta__;
  if (!meta?.hash) {
    throw new Error('the document has no persisted hash: regenerate with scripts/clients');
  }
  return { documentId: meta.hash, variables };
}
