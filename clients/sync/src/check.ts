// The offline sync checks with the replica of replica.ts, against the real
// server (sync_client_test.go starts it, with a data directory, and a
// control server that changes data as another user and restarts the
// server). Every check prints one JSON line on stdout, {"check": name,
// "ok": bool, "detail": text}, after a first line {"plan": [names]}; the Go
// test makes each a subtest. LIVE_CONFIG holds the addresses and tokens.
import WebSocket from 'ws';
import { COMMENT, PROJECT, Replica, TASK, USER, type Obj } from './replica.js';

type Config = {
  url: string; // the server's /query
  control: string; // the control server's base URL
  alice: string; // the replica's viewer's bearer token
  bob: string; // another viewer's
  waitMs: number; // a failure guard per wait
};

const cfg = JSON.parse(process.env.LIVE_CONFIG ?? '{}') as Config; // the variable the Go test's runNodeChecks sets

function report(check: string, ok: boolean, detail = ''): void {
  process.stdout.write(JSON.stringify({ check, ok, detail }) + '\n');
}

async function post<T>(url: string, bearer: string, query: string, variables: Record<string, unknown> = {}): Promise<{ data?: T; errors?: { message: string; extensions?: { code?: string } }[] }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${bearer}` },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as { data?: T; errors?: { message: string; extensions?: { code?: string } }[] };
}

async function mustPost<T>(url: string, bearer: string, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const r = await post<T>(url, bearer, query, variables);
  if (r.errors?.length || !r.data) throw new Error(`${query.slice(0, 60)}…: ${JSON.stringify(r.errors)}`);
  return r.data;
}

type Conn<T> = { nodes: T[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };

/** What a fresh read shows the viewer, in the replica's shape. */
async function fullRead(url: string, bearer: string): Promise<Map<string, Obj>> {
  const out = new Map<string, Obj>();
  type P = Omit<Extract<Obj, { __typename: 'Project' }>, '__typename'> & { members: { role: string; user: { id: string; name: string; email: string | null } }[] };
  const me = await mustPost<{ me: { id: string; name: string; email: string | null; projects: Conn<P> } }>(url, bearer,
    `{ me { ${USER} projects(first: 100) { nodes { ${PROJECT} members { role user { ${USER} } } } pageInfo { hasNextPage endCursor } } } }`);
  out.set(me.me.id, { __typename: 'User', id: me.me.id, name: me.me.name, email: me.me.email });
  for (const p of me.me.projects.nodes) {
    for (const m of p.members) out.set(m.user.id, { __typename: 'User', ...m.user });
    out.set(p.id, { __typename: 'Project', ...p, members: p.members.map((m) => ({ role: m.role, user: { id: m.user.id } })) });
    for (let after: string | null = null; ;) {
      type T = Omit<Extract<Obj, { __typename: 'Task' }>, '__typename'>;
      const d: { project: { tasks: Conn<T> } } = await mustPost(url, bearer,
        `query($id: ID!, $after: String) { project(id: $id) { tasks(first: 100, after: $after) { nodes { ${TASK} } pageInfo { hasNextPage endCursor } } } }`,
        { id: p.id, after });
      for (const t of d.project.tasks.nodes) {
        out.set(t.id, { __typename: 'Task', ...t });
        for (let cafter: string | null = null; ;) {
          type C = Omit<Extract<Obj, { __typename: 'Comment' }>, '__typename'>;
          const c: { task: { comments: Conn<C> } } = await mustPost(url, bearer,
            `query($id: ID!, $after: String) { task(id: $id) { comments(first: 100, after: $after) { nodes { ${COMMENT} } pageInfo { hasNextPage endCursor } } } }`,
            { id: t.id, after: cafter });
          for (const cm of c.task.comments.nodes) out.set(cm.id, { __typename: 'Comment', ...cm });
          if (!c.task.comments.pageInfo.hasNextPage) break;
          cafter = c.task.comments.pageInfo.endCursor;
        }
      }
      if (!d.project.tasks.pageInfo.hasNextPage) break;
      after = d.project.tasks.pageInfo.endCursor;
    }
  }
  return out;
}

/** How a replica differs from a full read ("" when it does not). */
function diff(got: Map<string, Obj>, want: Map<string, Obj>): string {
  const lines: string[] = [];
  for (const [id, w] of want) {
    const g = got.get(id);
    if (!g) lines.push(`missing ${JSON.stringify(w)}`);
    else if (canonical(g) !== canonical(w)) lines.push(`stale ${JSON.stringify(g)}, want ${JSON.stringify(w)}`);
  }
  for (const [id, g] of got) if (!want.has(id)) lines.push(`extra ${JSON.stringify(g)}`);
  return lines.join('\n');
}

function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort()) : x));
}

/** Asks the control server to act; returns its answer. */
async function control(path: string): Promise<{ url: string; events: Record<string, number> }> {
  const res = await fetch(cfg.control + path, { method: 'POST' });
  if (!res.ok) throw new Error(`control ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { url: string; events: Record<string, number> };
}

/** Waits until the replica applied the events, or fails after the guard. */
async function waitEvents(r: Replica, want: Record<string, number>, before: Map<string, number>): Promise<void> {
  const deadline = Date.now() + cfg.waitMs;
  for (;;) {
    const missing = Object.entries(want).filter(([p, n]) => (r.applied.get(p) ?? 0) - (before.get(p) ?? 0) < n);
    if (missing.length === 0) return;
    const errs = r.takeErrors();
    if (errs.length) throw new Error(`the subscriptions failed: ${JSON.stringify(errs)}`);
    if (Date.now() > deadline) throw new Error(`events still awaited: ${JSON.stringify(missing)}`);
    await new Promise((res) => setTimeout(res, 20));
  }
}

async function mustEqual(r: Replica, url: string): Promise<string> {
  const d = diff(r.objects, await fullRead(url, cfg.alice));
  if (d) throw new Error(`the replica differs from a full read:\n${d}`);
  return `${r.objects.size} objects`;
}

const checks: [string, () => Promise<string>][] = [];
let url = cfg.url;
let replica = new Replica({ url, bearer: cfg.alice, webSocketImpl: WebSocket, first: 7 });
let stored = '';

checks.push(['a base sync, in pages of 7 changes, equals a full read', async () => {
  await replica.sync();
  return mustEqual(replica, url);
}]);

checks.push(["another viewer's token is refused with BAD_USER_INPUT", async () => {
  const r = await post(url, cfg.bob, 'query($s: String) { sync(since: $s) { hasMore } }', { s: replica.token });
  const code = r.errors?.[0]?.extensions?.code;
  if (code !== 'BAD_USER_INPUT') throw new Error(`got ${JSON.stringify(r)}`);
  return r.errors![0].message;
}]);

checks.push(["projectEvents from the sync's last token keep the replica equal to a full read", async () => {
  replica.goLive();
  // The subscriptions start from the token: changes made from now on come
  // as events, whenever the subscriptions are ready.
  const before = new Map(replica.applied);
  const done = await control('/changes');
  await waitEvents(replica, done.events, before);
  return mustEqual(replica, url);
}]);

checks.push(['offline across a restart of the server, the kept token brings what changed meanwhile', async () => {
  replica.stop();
  stored = replica.snapshot(); // the app's storage
  const n = replica.objects.size;
  replica = Replica.restore(stored, { url, bearer: cfg.alice, webSocketImpl: WebSocket, first: 7 });
  if (replica.objects.size !== n) throw new Error('the snapshot lost objects');
  const restarted = await control('/restart'); // the server stops, starts again, and another user changes things
  url = restarted.url;
  replica.moveTo(url);
  await replica.sync();
  if (replica.expired) throw new Error('the kept token was refused as expired');
  return mustEqual(replica, url);
}]);

checks.push(['after the restart, events from the new token keep it equal', async () => {
  replica.goLive();
  const before = new Map(replica.applied);
  const done = await control('/changes');
  await waitEvents(replica, done.events, before);
  const got = await mustEqual(replica, url);
  replica.stop();
  return got;
}]);

process.stdout.write(JSON.stringify({ plan: checks.map(([name]) => name) }) + '\n');
for (const [name, run] of checks) {
  try {
    report(name, true, await run());
  } catch (e) {
    report(name, false, e instanceof Error ? e.message : String(e));
    break; // later checks build on this one
  }
}
replica.stop();
