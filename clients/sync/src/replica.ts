// An offline-first replica of what one viewer may see, kept in memory by
// Query.sync and Subscription.projectEvents (docs/sync.md): what a mobile or
// desktop app keeps on disk to work offline. `sync()` pages a sync to its
// end (a base sync without a token, or after SYNC_TOKEN_EXPIRED);
// `goLive()` subscribes to each of the replica's projects from the sync's
// last token (graphql-ws), so that the stream starts where the sync left
// off; `snapshot()` and `Replica.restore()` are what the app writes to and
// reads from its storage.
import { createClient, type Client } from 'graphql-ws';

/** The fields a replica keeps of each type: references by id (normalized). */
export const PROJECT = `id name description owner { id } createdAt taskCounts { total todo inProgress done } members { role user { id } }`;
export const TASK = `id title description status dueDate tags { name } version commentCount createdAt updatedAt project { id } assignee { id }`;
export const COMMENT = `id body createdAt task { id } author { id }`;
export const USER = `id name email`;
/** A project's fields in an event: all but its members (a subscription's selection must stay cheap; member events start a sync). */
const PROJECT_OWN = `id name description owner { id } createdAt taskCounts { total todo inProgress done }`;

const SYNC = `query Sync($since: String, $first: Int) {
  sync(since: $since, first: $first) {
    nextToken hasMore
    upserts { __typename
      ... on Project { ${PROJECT} } ... on Task { ${TASK} } ... on Comment { ${COMMENT} } ... on User { ${USER} } }
    tombstones { nodeId typename }
  }
}`;

const EVENTS = `subscription Events($projectId: ID!, $after: String) {
  projectEvents(projectId: $projectId, after: $after) {
    cursor kind projectId subjectId
    task { ${TASK} }
    comment { ${COMMENT} }
    project { ${PROJECT_OWN} }
  }
}`;

type Ref = { id: string };
export type Project = {
  __typename: 'Project'; id: string; name: string; description: string | null; owner: Ref; createdAt: string;
  taskCounts: { total: number; todo: number; inProgress: number; done: number };
  members: { role: string; user: Ref }[];
};
export type Task = {
  __typename: 'Task'; id: string; title: string; description: string | null; status: 'TODO' | 'IN_PROGRESS' | 'DONE';
  dueDate: string | null; tags: { name: string }[]; version: number; commentCount: number; createdAt: string; updatedAt: string;
  project: Ref; assignee: Ref | null;
};
export type Comment = { __typename: 'Comment'; id: string; body: string; createdAt: string; task: Ref; author: Ref };
export type User = { __typename: 'User'; id: string; name: string; email: string | null };
export type Obj = Project | Task | Comment | User;

type SyncPage = {
  nextToken: string; hasMore: boolean;
  upserts: Obj[];
  tombstones: { nodeId: string; typename: string }[];
};

type ProjectEvent = {
  cursor: string; kind: string; projectId: string; subjectId: string;
  task: Omit<Task, '__typename'> | null;
  comment: Omit<Comment, '__typename'> | null;
  project: Omit<Project, '__typename' | 'members'> | null;
};

/** A GraphQL error with the contract's code. */
export class GraphQLError extends Error {
  constructor(message: string, readonly code: string) {
    super(message);
  }
}

/** What the app keeps in its storage. */
export type Snapshot = { token: string | null; objects: Obj[] };

export type ReplicaOptions = {
  /** The server's /query URL. */
  url: string;
  /** The viewer's bearer token. */
  bearer: string;
  /** A WebSocket implementation where there is no global one (Node: ws). */
  webSocketImpl?: unknown;
  /** How many changes a page of sync covers (1..100). */
  first?: number;
};

export class Replica {
  /** Every object the viewer may see, by id. */
  readonly objects = new Map<string, Obj>();
  /** Where the next sync starts: the last page's nextToken. */
  token: string | null = null;
  /** How many syncs were refused as expired (and started again from null). */
  expired = 0;
  /** How many events were applied, by project. */
  readonly applied = new Map<string, number>();

  private ws: Client | null = null;
  private readonly unsubscribe: (() => void)[] = [];
  private syncing: Promise<void> | null = null;
  private errors: unknown[] = [];

  constructor(private opts: ReplicaOptions) {}

  /** The replica as the app stores it. */
  snapshot(): string {
    const s: Snapshot = { token: this.token, objects: [...this.objects.values()] };
    return JSON.stringify(s);
  }

  /** A replica read back from storage. */
  static restore(snapshot: string, opts: ReplicaOptions): Replica {
    const s = JSON.parse(snapshot) as Snapshot;
    const r = new Replica(opts);
    r.token = s.token;
    for (const o of s.objects) r.objects.set(o.id, o);
    return r;
  }

  /** Points the replica at another server address (a restart, a move). */
  moveTo(url: string): void {
    this.opts = { ...this.opts, url };
  }

  private async query<T>(query: string, variables: Record<string, unknown>): Promise<T> {
    const res = await fetch(this.opts.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/graphql-response+json', Authorization: `Bearer ${this.opts.bearer}` },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await res.json()) as { data?: T; errors?: { message: string; extensions?: { code?: string } }[] };
    if (body.errors?.length) {
      const e = body.errors[0];
      throw new GraphQLError(e.message, e.extensions?.code ?? 'UNKNOWN');
    }
    return body.data as T;
  }

  /**
   * Pages a sync to its end and applies every page: upserts replace,
   * tombstones drop. A token older than the server keeps changes for is
   * refused with SYNC_TOKEN_EXPIRED: the copy is dropped and a base sync
   * starts. Concurrent calls share one sync.
   */
  sync(): Promise<void> {
    if (!this.syncing) {
      this.syncing = this.syncToEnd().finally(() => {
        this.syncing = null;
      });
    }
    return this.syncing;
  }

  private async syncToEnd(): Promise<void> {
    for (;;) {
      let page: SyncPage;
      try {
        page = (await this.query<{ sync: SyncPage }>(SYNC, { since: this.token, first: this.opts.first ?? 100 })).sync;
      } catch (e) {
        if (e instanceof GraphQLError && e.code === 'SYNC_TOKEN_EXPIRED') {
          this.expired++;
          this.token = null;
          this.objects.clear();
          continue;
        }
        throw e;
      }
      for (const o of page.upserts) this.objects.set(o.id, o);
      for (const t of page.tombstones) this.objects.delete(t.nodeId);
      this.token = page.nextToken;
      if (!page.hasMore) return;
    }
  }

  /** The ids of the replica's projects. */
  projects(): string[] {
    return [...this.objects.values()].filter((o) => o.__typename === 'Project').map((o) => o.id).sort();
  }

  /**
   * Subscribes to each of the replica's projects from the last sync's
   * token: every change committed after the sync read a project comes as
   * an event. Events apply to the replica; those that change who sees
   * what (a member removed, the project deleted) start a sync, which
   * decides what the viewer still sees.
   */
  goLive(): void {
    this.stop();
    const after = this.token;
    this.ws = createClient({
      url: this.opts.url.replace(/^http/, 'ws'),
      connectionParams: { Authorization: `Bearer ${this.opts.bearer}` },
      webSocketImpl: this.opts.webSocketImpl,
      retryAttempts: 0,
    });
    for (const projectId of this.projects()) {
      const dispose = this.ws.subscribe<{ projectEvents: ProjectEvent }>(
        { query: EVENTS, variables: { projectId, after } },
        {
          next: (v) => {
            if (v.data) this.applyEvent(v.data.projectEvents);
            if (v.errors?.length) this.errors.push(v.errors);
          },
          error: (e) => this.errors.push(e),
          complete: () => {},
        },
      );
      this.unsubscribe.push(dispose);
    }
  }

  /** Ends the subscriptions (the app goes offline). */
  stop(): void {
    for (const u of this.unsubscribe.splice(0)) u();
    void this.ws?.dispose();
    this.ws = null;
  }

  /** Errors the subscriptions reported. */
  takeErrors(): unknown[] {
    return this.errors.splice(0);
  }

  private applyEvent(e: ProjectEvent): void {
    this.applied.set(e.projectId, (this.applied.get(e.projectId) ?? 0) + 1);
    switch (e.kind) {
      case 'TASK_CREATED':
      case 'TASK_UPDATED':
        if (e.task) this.putTask({ __typename: 'Task', ...e.task });
        break;
      case 'TASK_DELETED':
        this.dropTask(e.subjectId);
        break;
      case 'COMMENT_ADDED':
        // A replayed event of a comment the replica has (from the sync) is
        // no news: its task's count would be older than the replica's.
        if (e.comment && !this.objects.has(e.comment.id)) {
          this.objects.set(e.comment.id, { __typename: 'Comment', ...e.comment });
          if (e.task) this.putTask({ __typename: 'Task', ...e.task }, true);
        }
        break;
      case 'COMMENT_DELETED':
        if (this.objects.has(e.subjectId)) {
          this.objects.delete(e.subjectId);
          if (e.task) this.putTask({ __typename: 'Task', ...e.task }, true);
        }
        break;
      case 'PROJECT_UPDATED':
        if (e.project) this.putProject(e.project);
        break;
      case 'MEMBER_ADDED':
      case 'MEMBER_REMOVED':
      case 'PROJECT_DELETED':
        // Who may see whom (a member's profile, a user no longer shared),
        // the tasks a removal unassigned: the sync decides.
        void this.sync().catch((err) => this.errors.push(err));
        break;
    }
  }

  /** Puts a task that is newer than the replica's (by version; a comment's count whatever its version). */
  private putTask(t: Task, countOnly = false): void {
    const held = this.objects.get(t.id) as Task | undefined;
    if (held && countOnly && t.version <= held.version) {
      this.objects.set(t.id, { ...held, commentCount: t.commentCount });
      return;
    }
    if (held && t.version < held.version) return;
    this.count(t.project.id, held?.status, t.status);
    this.objects.set(t.id, t);
  }

  /** Drops a task and its comments. */
  private dropTask(id: string): void {
    const held = this.objects.get(id) as Task | undefined;
    if (!held) return;
    this.count(held.project.id, held.status, undefined);
    this.objects.delete(id);
    for (const o of [...this.objects.values()]) {
      if (o.__typename === 'Comment' && o.task.id === id) this.objects.delete(o.id);
    }
  }

  /** Puts a project's own fields, keeping the members the replica has (member events sync). */
  private putProject(p: NonNullable<ProjectEvent['project']>): void {
    const held = this.objects.get(p.id) as Project | undefined;
    this.objects.set(p.id, { __typename: 'Project', ...p, members: held?.members ?? [] });
  }

  /** Keeps a project's task counts as its tasks come and go (events carry no project). */
  private count(projectId: string, from: Task['status'] | undefined, to: Task['status'] | undefined): void {
    const p = this.objects.get(projectId) as Project | undefined;
    if (!p || from === to) return;
    const c = { ...p.taskCounts };
    const key = { TODO: 'todo', IN_PROGRESS: 'inProgress', DONE: 'done' } as const;
    if (from) {
      c[key[from]]--;
      c.total--;
    }
    if (to) {
      c[key[to]]++;
      c.total++;
    }
    this.objects.set(projectId, { ...p, taskCounts: c });
  }
}
