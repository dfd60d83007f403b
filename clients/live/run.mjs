// The live-updates checks with the clients our users use: the graphql-ws
// client (graphql-transport-ws protocol), the graphql-sse client (distinct
// connections mode), a minimal client of the legacy graphql-ws subprotocol
// (subscriptions-transport-ws frames, hand-written on `ws`: the npm client of
// that protocol is unmaintained) and raw `ws` sockets where a check needs to
// misbehave (a slow reader, a foreign Origin).
//
// Run by live_clients_test.go, which starts the NATS server and the two
// server instances and passes their addresses, tokens and ids as JSON in
// LIVE_CONFIG (see the config type there). Every check prints one JSON line
// on stdout: {"check": name, "ok": bool, "detail": text}, after a first line
// {"plan": [names]}; the Go test makes each a subtest. LIVE_ONLY (a regular
// expression) runs only the checks it matches. Progress and diagnostics go to stderr.
//
// Every wait is for an event, bounded by a failure guard (WAIT_MS); nothing
// sleeps and hopes.
import { createClient as createWSClient } from 'graphql-ws';
import { createClient as createSSEClient } from 'graphql-sse';
import WebSocket from 'ws';

const cfg = JSON.parse(process.env.LIVE_CONFIG ?? '{}');
const WAIT_MS = cfg.waitMs ?? 20_000; // a failure guard, never a pace

const EVENTS = `subscription Events($projectId: ID!, $after: String) {
  projectEvents(projectId: $projectId, after: $after) {
    cursor kind projectId subjectId at actor { id name }
    task { id title status version assignee { id name } }
    project { id name }
  }
}`;

// ---------------------------------------------------------------------------
// Plumbing

function log(...args) {
  console.error('[live]', ...args);
}

function report(check, ok, detail = '') {
  process.stdout.write(JSON.stringify({ check, ok, detail }) + '\n');
}

class CheckError extends Error {}

function fail(msg) {
  throw new CheckError(msg);
}

function expect(cond, msg) {
  if (!cond) fail(msg);
}

function show(v) {
  const s = JSON.stringify(v);
  return s && s.length > 600 ? s.slice(0, 600) + '…' : s;
}

// Queue turns a sink's callbacks into awaitable items, in order:
// {type: 'next', value} | {type: 'error', error} | {type: 'complete'}.
class Queue {
  constructor(name) {
    this.name = name;
    this.items = [];
    this.waiters = [];
  }
  push(item) {
    const w = this.waiters.shift();
    if (w) w(item);
    else this.items.push(item);
  }
  sink() {
    return {
      next: (value) => this.push({ type: 'next', value }),
      error: (error) => this.push({ type: 'error', error }),
      complete: () => this.push({ type: 'complete' }),
    };
  }
  // take resolves with the next item, or fails the check after WAIT_MS.
  async take(what) {
    const it = await this.within(WAIT_MS);
    if (it === null) fail(`${this.name}: nothing within ${WAIT_MS} ms while waiting for ${what}`);
    return it;
  }
  // within resolves with the next item, or with null after ms (the item
  // that comes later stays queued).
  within(ms) {
    if (this.items.length) return Promise.resolve(this.items.shift());
    return new Promise((resolve) => {
      const done = (item) => {
        clearTimeout(timer);
        resolve(item);
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(done), 1);
        resolve(null);
      }, ms);
      this.waiters.push(done);
    });
  }
  // event resolves with the next ProjectEvent; an error or the end fails.
  async event(what) {
    const it = await this.take(what);
    if (it.type !== 'next') fail(`${this.name}: waiting for ${what}, got ${describe(it)}`);
    const { data, errors } = it.value;
    if (errors?.length) fail(`${this.name}: waiting for ${what}, got errors ${show(errors)}`);
    return data.projectEvents;
  }
  // events resolves with the next n ProjectEvents.
  async events(n, what) {
    const out = [];
    for (let i = 0; i < n; i++) out.push(await this.event(`${what} (${i + 1} of ${n})`));
    return out;
  }
  // refusal resolves with the GraphQL errors that end a refused
  // subscription: an error message, or a result with errors then the end.
  async refusal(what) {
    const it = await this.take(what);
    if (it.type === 'error' && Array.isArray(it.error)) return it.error;
    if (it.type === 'next' && it.value.errors?.length) return it.value.errors;
    fail(`${this.name}: waiting for ${what}, got ${describe(it)}`);
  }
}

function describe(item) {
  switch (item.type) {
    case 'next':
      return `an event ${show(item.value)}`;
    case 'complete':
      return 'the end of the stream';
    default: {
      const e = item.error;
      if (Array.isArray(e)) return `errors ${show(e)}`;
      if (e && typeof e.code === 'number') return `a close (${e.code} ${e.reason})`;
      return `an error ${e?.message ?? show(e)}`;
    }
  }
}

function codes(errors) {
  return errors.map((e) => e.extensions?.code);
}

function wsURL(httpURL) {
  const u = new URL(httpURL);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  return u.href;
}

function bearer(token) {
  return `Bearer ${token}`;
}

// gql posts a GraphQL operation over plain HTTP and returns its data; any
// error fails the check.
async function gql(url, token, query, variables) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: bearer(token) },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  if (res.status !== 200 || body.errors?.length) fail(`POST ${url}: ${res.status} ${show(body)}`);
  return body.data;
}

const UPDATE_TASK = `mutation U($input: UpdateTaskInput!) {
  updateTask(input: $input) { id title status version assignee { id name } }
}`;

// updateTask changes the task through the instance at url and returns the
// task as the mutation answered it.
async function updateTask(url, token, input) {
  return (await gql(url, token, UPDATE_TASK, { input })).updateTask;
}

// A graphql-ws client (graphql-transport-ws) on the instance at url.
function wsClient(url, token, name) {
  const client = createWSClient({
    url: wsURL(url),
    webSocketImpl: WebSocket,
    connectionParams: token ? { Authorization: bearer(token) } : {},
    retryAttempts: 0,
    lazy: true,
    onNonLazyError: () => {},
  });
  client.label = name;
  return client;
}

// closeClient disposes of a graphql-ws client; a client whose connection
// failed rejects with that failure, which its check has already seen.
async function closeClient(client) {
  await client.dispose().catch(() => {});
}

function subscribeWS(client, variables, name) {
  const q = new Queue(name);
  q.dispose = client.subscribe({ query: EVENTS, variables }, q.sink());
  return q;
}

// A graphql-sse client in distinct connections mode on the instance at url.
function subscribeSSE(url, token, variables, name) {
  const client = createSSEClient({
    url,
    headers: { Authorization: bearer(token) },
    singleConnection: false,
    retryAttempts: 0,
  });
  const q = new Queue(name);
  const dispose = client.subscribe({ query: EVENTS, variables }, q.sink());
  q.dispose = () => {
    dispose();
    client.dispose();
  };
  return q;
}

// sameTaskEvent checks that ev reports the update the mutation answered.
function sameTaskEvent(ev, answer, what) {
  expect(ev.kind === 'TASK_UPDATED', `${what}: kind ${ev.kind}, want TASK_UPDATED (${show(ev)})`);
  expect(ev.subjectId === answer.id && ev.task?.id === answer.id, `${what}: about ${ev.subjectId}, want ${answer.id} (${show(ev)})`);
  expect(ev.task.version === answer.version, `${what}: task version ${ev.task.version}, the mutation answered ${answer.version} (${show(ev)})`);
  expect(ev.task.title === answer.title && ev.task.status === answer.status, `${what}: task ${show(ev.task)}, the mutation answered ${show(answer)}`);
  expect(show(ev.task.assignee) === show(answer.assignee), `${what}: assignee ${show(ev.task.assignee)}, want ${show(answer.assignee)}`);
  expect(typeof ev.cursor === 'string' && ev.cursor !== '', `${what}: no cursor (${show(ev)})`);
}

function increasing(events, what) {
  for (let i = 1; i < events.length; i++) {
    const [a, b] = [events[i - 1].task.version, events[i].task.version];
    expect(b > a, `${what}: versions not increasing: ${events.map((e) => e.task.version).join(', ')}`);
  }
}

// warmUp makes changes through A until the subscription q (opened without
// `after`) has received one: then it is established, and every later change
// reaches it. It returns the events seen, the last one being the last
// warm-up change's (changes made before the subscription was in place are
// simply not delivered; none is delivered twice).
async function warmUp(q, taskId) {
  const answers = [];
  for (let i = 1; i <= 20; i++) {
    answers.push(await updateTask(cfg.a, cfg.tokens.alice, { id: taskId, title: `Warm-up ${i}` }));
    const it = await q.within(250 * i);
    if (it === null) continue;
    if (it.type !== 'next' || it.value.errors) fail(`${q.name}: warm-up got ${describe(it)}`);
    const seen = [it.value.data.projectEvents];
    const last = answers[answers.length - 1];
    while (seen[seen.length - 1].task?.version !== last.version) seen.push(await q.event('the last warm-up change'));
    return seen;
  }
  fail(`${q.name}: no event after 20 changes`);
}

// ---------------------------------------------------------------------------
// The checks, in order: later ones use the cursors earlier ones saw.

const state = { events: [] }; // every event of cfg.project seen so far, in stream order

const checks = [];
function check(name, fn) {
  checks.push({ name, fn });
}

check('graphql-ws: a change made through A reaches a subscriber on B, in order, nested fields resolved', async () => {
  const client = wsClient(cfg.b, cfg.tokens.alice, 'alice@B');
  const q = subscribeWS(client, { projectId: cfg.project }, 'alice on B (graphql-ws)');
  try {
    const warm = await warmUp(q, cfg.task);
    const changes = [
      { id: cfg.task, status: 'IN_PROGRESS', title: 'Live: in progress' },
      { id: cfg.task, assigneeId: cfg.users.bob, title: 'Live: handed to Bob' },
      { id: cfg.task, status: 'DONE', title: 'Live: done' },
    ];
    const answers = [];
    for (const c of changes) answers.push(await updateTask(cfg.a, cfg.tokens.alice, c));
    const got = await q.events(answers.length, 'the three changes made through A');
    got.forEach((ev, i) => sameTaskEvent(ev, answers[i], `event ${i + 1}`));
    expect(got[1].task.assignee?.name === 'Bob Builder', `nested assignee not resolved: ${show(got[1].task)}`);
    expect(got.every((ev) => ev.actor?.id === cfg.users.alice && ev.actor.name === 'Alice Example'), `actor: ${show(got.map((e) => e.actor))}`);
    expect(got.every((ev) => ev.projectId === cfg.project), `projectId: ${show(got.map((e) => e.projectId))}`);
    const all = [...warm, ...got];
    increasing(all, 'the stream');
    expect(new Set(all.map((e) => e.cursor)).size === all.length, `cursors repeat: ${all.map((e) => e.cursor)}`);
    state.events.push(...all);
    return `${warm.length} warm-up and 3 events, versions ${all.map((e) => e.task.version).join(', ')}`;
  } finally {
    q.dispose();
    await closeClient(client);
  }
});

check('graphql-ws: subscribing to a project one is not a member of is refused with NOT_FOUND', async () => {
  const out = [];
  for (const [who, project] of [
    ['eve', cfg.project],
    ['alice', cfg.otherProject],
  ]) {
    const client = wsClient(cfg.b, cfg.tokens[who], who);
    const q = subscribeWS(client, { projectId: project }, `${who} on B`);
    try {
      const errs = await q.refusal('the refusal');
      expect(show(codes(errs)) === show(['NOT_FOUND']), `${who}: codes ${show(codes(errs))}, want [NOT_FOUND]: ${show(errs)}`);
      out.push(`${who}: ${errs[0].message}`);
    } finally {
      q.dispose();
      await closeClient(client);
    }
  }
  return out.join('; ');
});

check('graphql-ws: after a cursor replays exactly the missed events, once each, then goes live', async () => {
  expect(state.events.length > 0, 'needs the events of the first check');
  const carolA = wsClient(cfg.a, cfg.tokens.carol, 'carol@A');
  let q = subscribeWS(carolA, { projectId: cfg.project, after: state.events.at(-1).cursor }, 'carol on A (graphql-ws)');
  let seen;
  try {
    // A change through B, seen on A: the other direction.
    const m1 = await updateTask(cfg.b, cfg.tokens.alice, { id: cfg.task, title: 'Resume 1' });
    seen = await q.event('change 1 (made through B)');
    sameTaskEvent(seen, m1, 'change 1');
    state.events.push(seen);
  } finally {
    q.dispose();
    await closeClient(carolA);
  }
  // Carol is away: two changes she misses.
  const missed = [];
  for (const title of ['Resume 2 (missed)', 'Resume 3 (missed)']) missed.push(await updateTask(cfg.a, cfg.tokens.alice, { id: cfg.task, title }));
  const carolB = wsClient(cfg.b, cfg.tokens.carol, 'carol@B');
  q = subscribeWS(carolB, { projectId: cfg.project, after: seen.cursor }, 'carol back on B (graphql-ws)');
  try {
    const replayed = await q.events(2, 'the two missed changes');
    replayed.forEach((ev, i) => sameTaskEvent(ev, missed[i], `replayed ${i + 1}`));
    // Live again; and the next event after each change is that change's:
    // nothing was delivered twice.
    const live = [];
    for (const title of ['Resume 4 (live)', 'Resume 5 (live)']) {
      const m = await updateTask(cfg.a, cfg.tokens.alice, { id: cfg.task, title });
      const ev = await q.event(title);
      sameTaskEvent(ev, m, title);
      live.push(ev);
    }
    const all = [seen, ...replayed, ...live];
    increasing(all, 'the resumed stream');
    state.events.push(...replayed, ...live);
    return `replayed versions ${replayed.map((e) => e.task.version).join(', ')}, then live ${live.map((e) => e.task.version).join(', ')}`;
  } finally {
    q.dispose();
    await closeClient(carolB);
  }
});

check('graphql-ws: a malformed cursor, or another project\'s, is refused with BAD_USER_INPUT', async () => {
  const out = [];
  for (const [what, vars] of [
    ['malformed', { projectId: cfg.project, after: 'not-a-cursor' }],
    ["another project's", { projectId: cfg.appProject, after: state.events.at(-1)?.cursor ?? 'x' }],
  ]) {
    const client = wsClient(cfg.b, cfg.tokens.alice, 'alice');
    const q = subscribeWS(client, vars, `alice with a ${what} cursor`);
    try {
      const errs = await q.refusal('the refusal');
      expect(show(codes(errs)) === show(['BAD_USER_INPUT']), `${what}: codes ${show(codes(errs))}, want [BAD_USER_INPUT]: ${show(errs)}`);
      out.push(`${what}: ${errs[0].message}`);
    } finally {
      q.dispose();
      await closeClient(client);
    }
  }
  return out.join('; ');
});

// expectSameStream checks that got are the events of state.events after
// the first one, cursor for cursor.
function expectSameStream(got, what) {
  const want = state.events.slice(1);
  expect(got.length === want.length, `${what}: ${got.length} events, want ${want.length}`);
  got.forEach((ev, i) => {
    expect(ev.cursor === want[i].cursor && ev.kind === want[i].kind && ev.task?.version === want[i].task?.version,
      `${what}: event ${i + 1} is ${show(ev)}, graphql-ws saw ${show(want[i])}`);
    expect(show(ev.task.assignee) === show(want[i].task.assignee), `${what}: event ${i + 1} assignee ${show(ev.task.assignee)}, want ${show(want[i].task.assignee)}`);
  });
}

check('graphql-sse (distinct connections): the same events, then live', async () => {
  expect(state.events.length > 1, 'needs the events of the earlier checks');
  const q = subscribeSSE(cfg.a, cfg.tokens.alice, { projectId: cfg.project, after: state.events[0].cursor }, 'alice on A (graphql-sse)');
  try {
    const replayed = await q.events(state.events.length - 1, 'the events graphql-ws saw');
    expectSameStream(replayed, 'SSE');
    const m = await updateTask(cfg.b, cfg.tokens.alice, { id: cfg.task, title: 'Over SSE (live)' });
    const ev = await q.event('a live change over SSE');
    sameTaskEvent(ev, m, 'live over SSE');
    state.events.push(ev);
    return `${replayed.length} replayed and 1 live event`;
  } finally {
    q.dispose();
  }
});

// legacySubscribe speaks the legacy graphql-ws subprotocol
// (subscriptions-transport-ws frames) over a raw socket.
function legacySubscribe(url, token, variables, name) {
  const q = new Queue(name);
  const ws = new WebSocket(wsURL(url), 'graphql-ws');
  q.protocol = () => ws.protocol;
  ws.on('open', () => {
    ws.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: bearer(token) } }));
  });
  ws.on('message', (raw) => {
    const m = JSON.parse(raw.toString());
    switch (m.type) {
      case 'connection_ack':
        ws.send(JSON.stringify({ id: '1', type: 'start', payload: { query: EVENTS, variables } }));
        break;
      case 'ka':
        break;
      case 'data':
        q.push({ type: 'next', value: m.payload });
        break;
      case 'error':
        q.push({ type: 'error', error: Array.isArray(m.payload) ? m.payload : [m.payload] });
        break;
      case 'complete':
        q.push({ type: 'complete' });
        break;
      default:
        q.push({ type: 'error', error: new Error(`unexpected frame ${show(m)}`) });
    }
  });
  ws.on('close', (code, reason) => q.push({ type: 'error', error: { code, reason: reason.toString() } }));
  ws.on('error', (e) => q.push({ type: 'error', error: e }));
  q.stop = () => ws.send(JSON.stringify({ id: '1', type: 'stop' }));
  q.dispose = () => ws.close();
  return q;
}

check('legacy graphql-ws subprotocol (hand-written client): the same events, then live', async () => {
  expect(state.events.length > 1, 'needs the events of the earlier checks');
  const q = legacySubscribe(cfg.a, cfg.tokens.alice, { projectId: cfg.project, after: state.events[0].cursor }, 'alice on A (legacy graphql-ws)');
  try {
    const replayed = await q.events(state.events.length - 1, 'the events graphql-ws saw');
    expect(q.protocol() === 'graphql-ws', `the server chose the subprotocol ${q.protocol()}`);
    expectSameStream(replayed, 'legacy');
    const m = await updateTask(cfg.b, cfg.tokens.alice, { id: cfg.task, title: 'Over the legacy protocol (live)' });
    const ev = await q.event('a live change');
    sameTaskEvent(ev, m, 'live over the legacy protocol');
    state.events.push(ev);
    q.stop();
    const end = await q.take('complete after stop');
    expect(end.type === 'complete', `after stop: ${describe(end)}, want complete`);
    return `${replayed.length} replayed and 1 live event, complete after stop`;
  } finally {
    q.dispose();
  }
});

check('graphql-ws: a client that missed more events than its subscription buffer resumes with all of them (B keeps 8)', async () => {
  expect(state.events.length > 0, 'needs the events of the earlier checks');
  const from = state.events.at(-1).cursor;
  const missed = [];
  for (let i = 1; i <= 3 * cfg.bufferB; i++) missed.push(await updateTask(cfg.a, cfg.tokens.alice, { id: cfg.task, title: `Missed ${i}` }));
  const client = wsClient(cfg.b, cfg.tokens.alice, 'alice@B');
  const q = subscribeWS(client, { projectId: cfg.project, after: from }, 'alice back on B after a long absence');
  try {
    const replayed = await q.events(missed.length, `the ${missed.length} missed changes`);
    replayed.forEach((ev, i) => sameTaskEvent(ev, missed[i], `replayed ${i + 1}`));
    const m = await updateTask(cfg.a, cfg.tokens.alice, { id: cfg.task, title: 'Live after a long replay' });
    sameTaskEvent(await q.event('the next change'), m, 'live after the replay');
    state.events.push(...replayed);
    return `${replayed.length} replayed, then live`;
  } finally {
    q.dispose();
    await closeClient(client);
  }
});

// subscribersB asks the test how many subscriptions of project B holds.
async function subscribersB(project) {
  const res = await fetch(`${cfg.subscribersB}?project=${encodeURIComponent(project)}`);
  return Number(await res.text());
}

// untilSubscribersB polls subscribersB until it is n, within WAIT_MS.
async function untilSubscribersB(project, n) {
  const end = Date.now() + WAIT_MS;
  let got;
  while ((got = await subscribersB(project)) !== n) {
    if (Date.now() > end) fail(`B holds ${got} subscriptions of the project, want ${n}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

check('graphql-ws: a client that stops reading is closed with 1013 and the reason; retrying with its last cursor it gets every event once (B keeps 8)', async () => {
  expect(state.events.length > 0, 'needs the events of the earlier checks');
  // Events of 25 copies of a 10,000-character description fill the
  // socket's buffers within a few dozen changes.
  const bigTask = await updateTask(cfg.a, cfg.tokens.alice, { id: cfg.task, title: 'Big', description: 'x'.repeat(10_000) });
  const big = Array.from({ length: 25 }, (_, i) => `d${i}: task { description }`).join(' ');
  const query = `subscription($projectId: ID!, $after: String) {
    projectEvents(projectId: $projectId, after: $after) { cursor kind task { id title version } ${big} } }`;
  const sockets = [];
  class Tracked extends WebSocket {
    constructor(...args) {
      super(...args);
      sockets.push(this);
    }
  }
  const closes = [];
  // What an application does: keep the last cursor in the variables the
  // client sends again when it resubscribes after a retry.
  const variables = { projectId: cfg.project, after: state.events.at(-1).cursor };
  const client = createWSClient({
    url: wsURL(cfg.b),
    webSocketImpl: Tracked,
    connectionParams: { Authorization: bearer(cfg.tokens.alice) },
    retryAttempts: 3,
    retryWait: async () => {},
    lazy: true,
    on: { closed: (e) => closes.push({ code: e.code, reason: String(e.reason) }) },
  });
  const q = new Queue('alice on B, not reading for a while');
  const sink = q.sink();
  q.dispose = client.subscribe({ query, variables }, {
    ...sink,
    next: (v) => {
      if (v.data?.projectEvents?.cursor) variables.after = v.data.projectEvents.cursor;
      sink.next(v);
    },
  });
  try {
    // Replayed up to the big change: the subscription is in place.
    let ev = await q.event('the big change');
    while (ev.task?.version !== bigTask.version) ev = await q.event('the big change');
    await untilSubscribersB(cfg.project, 1);
    const paused = sockets.at(-1);
    paused.pause();
    const answers = [];
    for (let i = 1; (await subscribersB(cfg.project)) === 1; i++) {
      if (i > 500) fail('500 big changes and B still holds the subscription of a client that reads nothing');
      answers.push(await updateTask(cfg.a, cfg.tokens.alice, { id: cfg.task, title: `Unread ${i}` }));
    }
    const cutAfter = answers.length;
    for (let i = 1; i <= 3; i++) answers.push(await updateTask(cfg.a, cfg.tokens.alice, { id: cfg.task, title: `After the cut ${i}` }));
    paused.resume();
    const got = await q.events(answers.length, 'every change, across the retry');
    got.forEach((e, i) => {
      expect(e.task.version === answers[i].version && e.task.title === answers[i].title,
        `event ${i + 1}: ${show(e.task)}, the change answered ${show({ title: answers[i].title, version: answers[i].version })}`);
    });
    expect(new Set(got.map((e) => e.cursor)).size === got.length, 'an event came twice');
    expect(closes.length >= 1 && closes[0].code === 1013 && /fell behind/.test(closes[0].reason) && /cursor/.test(closes[0].reason),
      `closes ${show(closes)}, want first 1013 "subscriber fell behind; resume with your last cursor"`);
    expect(sockets.length === 2, `${sockets.length} sockets, want the first and one retry`);
    state.events.push(...got);
    return `cut off after ${cutAfter} unread changes: closed ${closes[0].code} "${closes[0].reason}"; the retry resumed with its last cursor: all ${got.length} changes once, in order`;
  } finally {
    q.dispose();
    await closeClient(client);
  }
});

check('the request limits apply to subscriptions: too many aliases is COMPLEXITY_LIMIT_EXCEEDED over graphql-ws and graphql-sse', async () => {
  const aliases = Array.from({ length: 31 }, (_, i) => `a${i}: kind`).join(' ');
  const query = `subscription($projectId: ID!) { projectEvents(projectId: $projectId) { ${aliases} } }`;
  const out = [];
  const client = wsClient(cfg.b, cfg.tokens.alice, 'alice@B');
  const ws = new Queue('31 aliases over graphql-ws');
  ws.dispose = client.subscribe({ query, variables: { projectId: cfg.project } }, ws.sink());
  const sse = createSSEClient({ url: cfg.b, headers: { Authorization: bearer(cfg.tokens.alice) }, singleConnection: false, retryAttempts: 0 });
  const q = new Queue('31 aliases over graphql-sse');
  q.dispose = sse.subscribe({ query, variables: { projectId: cfg.project } }, q.sink());
  try {
    for (const r of [ws, q]) {
      const errs = await r.refusal('the refusal');
      expect(show(codes(errs)) === show(['COMPLEXITY_LIMIT_EXCEEDED']), `${r.name}: codes ${show(codes(errs))}: ${show(errs)}`);
      out.push(`${r.name}: ${errs[0].message}`);
    }
    return out.join('; ');
  } finally {
    ws.dispose();
    q.dispose();
    sse.dispose();
    await closeClient(client);
  }
});

check('graphql-ws: a token that expires ends the subscription with UNAUTHENTICATED', async () => {
  const client = wsClient(cfg.b, cfg.tokens.shortLived, 'alice@B (short-lived token)');
  const q = subscribeWS(client, { projectId: cfg.project }, 'alice with a token about to expire');
  try {
    let it = await q.take('the end at expiry');
    while (it.type === 'next' && !it.value.errors?.length) it = await q.take('the end at expiry');
    const errs = it.type === 'next' ? it.value.errors : Array.isArray(it.error) ? it.error : null;
    expect(errs && show(codes(errs)) === show(['UNAUTHENTICATED']), `at expiry: ${describe(it)}, want UNAUTHENTICATED`);
    return errs[0].message;
  } finally {
    q.dispose();
    await closeClient(client);
  }
});

const ADD_MEMBER = `mutation A($p: ID!, $u: ID!) { addProjectMember(projectId: $p, userId: $u) { id } }`;
const REMOVE_MEMBER = `mutation R($p: ID!, $u: ID!) { removeProjectMember(projectId: $p, userId: $u) { id } }`;

check("a removed member's stream ends right after MEMBER_REMOVED; the others' goes on", async () => {
  expect(state.events.length > 0, 'needs the events of the earlier checks');
  const from = state.events.at(-1).cursor;
  const daveC = wsClient(cfg.a, cfg.tokens.dave, 'dave@A');
  const aliceC = wsClient(cfg.a, cfg.tokens.alice, 'alice@A');
  const added = await gql(cfg.b, cfg.tokens.alice, ADD_MEMBER, { p: cfg.project, u: cfg.users.dave });
  expect(added.addProjectMember.id === cfg.project, `addProjectMember answered ${show(added)}`);
  // Both from the same cursor: the replay makes the start race-free. On A
  // (changes through B), whose buffer takes any replay here.
  const dave = subscribeWS(daveC, { projectId: cfg.project, after: from }, 'dave on A');
  const alice = subscribeWS(aliceC, { projectId: cfg.project, after: from }, 'alice on A');
  try {
    for (const q of [dave, alice]) {
      // Changes an earlier check made may come first, if it failed before
      // it saw them.
      let ev = await q.event('MEMBER_ADDED');
      while (ev.kind === 'TASK_UPDATED') ev = await q.event('MEMBER_ADDED');
      expect(ev.kind === 'MEMBER_ADDED' && ev.subjectId === cfg.users.dave, `${q.name}: ${show(ev)}, want MEMBER_ADDED of dave`);
      expect(ev.project?.id === cfg.project, `${q.name}: MEMBER_ADDED without the project: ${show(ev)}`);
    }
    await gql(cfg.b, cfg.tokens.alice, REMOVE_MEMBER, { p: cfg.project, u: cfg.users.dave });
    for (const q of [dave, alice]) {
      const ev = await q.event('MEMBER_REMOVED');
      expect(ev.kind === 'MEMBER_REMOVED' && ev.subjectId === cfg.users.dave, `${q.name}: ${show(ev)}, want MEMBER_REMOVED of dave`);
      state.last = ev;
    }
    const end = await dave.take("the end of dave's stream");
    expect(end.type === 'complete', `dave after MEMBER_REMOVED: ${describe(end)}, want the end of the stream`);
    const m = await updateTask(cfg.b, cfg.tokens.alice, { id: cfg.task, title: 'After dave left' });
    sameTaskEvent(await alice.event('the next change'), m, "alice's next event");
    return "dave's stream completed after MEMBER_REMOVED; alice's went on";
  } finally {
    dave.dispose();
    alice.dispose();
    await closeClient(daveC);
    await closeClient(aliceC);
  }
});

// rawSocket opens a graphql-transport-ws socket by hand, with extra
// handshake headers; it resolves once the server acknowledged the
// connection, or rejects with the refusal (HTTP status or close).
function rawSocket(url, token, headers = {}) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsURL(url), 'graphql-transport-ws', { headers });
    const t = setTimeout(() => reject(new CheckError(`no answer to the handshake within ${WAIT_MS} ms`)), WAIT_MS);
    ws.on('unexpected-response', (_req, res) => {
      clearTimeout(t);
      reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode }));
      ws.terminate();
    });
    ws.on('error', (e) => {
      clearTimeout(t);
      reject(e);
    });
    ws.on('close', (code, reason) => {
      clearTimeout(t);
      reject(Object.assign(new Error(`closed ${code} ${reason}`), { code, reason: reason.toString() }));
    });
    ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: token ? { Authorization: bearer(token) } : {} })));
    ws.once('message', (raw) => {
      clearTimeout(t);
      const m = JSON.parse(raw.toString());
      if (m.type !== 'connection_ack') reject(new CheckError(`first frame ${show(m)}, want connection_ack`));
      ws.removeAllListeners('close');
      ws.removeAllListeners('error');
      resolve(ws);
    });
  });
}

// closeOf opens a graphql-transport-ws socket with connection_init's
// payload and resolves with how the server ends it: {code, reason, acked}.
function closeOf(url, payload) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsURL(url), 'graphql-transport-ws');
    let acked = false;
    const t = setTimeout(() => {
      ws.terminate();
      reject(new CheckError(`the socket was neither closed nor acknowledged within ${WAIT_MS} ms`));
    }, WAIT_MS);
    ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload })));
    ws.on('message', (raw) => {
      if (JSON.parse(raw.toString()).type === 'connection_ack') {
        acked = true;
        ws.close();
      }
    });
    ws.on('close', (code, reason) => {
      clearTimeout(t);
      resolve({ code, reason: reason.toString(), acked });
    });
    ws.on('error', () => {});
  });
}

check('graphql-ws: a bad token in connection_init is refused: closed 4403 Forbidden, the client sees it', async () => {
  const out = [];
  for (const [what, token] of [
    ['a forged token', 'not.a.token'],
    ['an expired token', cfg.tokens.expired],
    ['no token', ''],
  ]) {
    const params = token ? { Authorization: bearer(token) } : {};
    // On the wire: graphql-transport-ws asks servers to reject a
    // connection with 4403 Forbidden.
    const c = await closeOf(cfg.b, params);
    expect(!c.acked, `${what}: the server acknowledged the connection`);
    expect(c.code === 4403, `${what}: closed with ${c.code} "${c.reason}", want 4403 (graphql-transport-ws: Forbidden); the graphql-ws client reconnects at once, without end, after a normal closure (1000)`);
    // And the real client reports it to the subscriber.
    let acks = 0;
    const client = createWSClient({
      url: wsURL(cfg.b),
      webSocketImpl: WebSocket,
      connectionParams: params,
      retryAttempts: 0,
      on: { connected: () => acks++ },
    });
    const q = subscribeWS(client, { projectId: cfg.project }, `a graphql-ws client with ${what}`);
    try {
      const it = await q.take('the refusal');
      expect(it.type === 'error' && it.error?.code === 4403, `${what}: the client got ${describe(it)}, want the close 4403`);
      expect(acks === 0, `${what}: the client was acknowledged`);
      out.push(`${what}: ${c.code} ${c.reason}`);
    } finally {
      q.dispose();
      await closeClient(client);
    }
  }
  return out.join('; ');
});

check('a WebSocket from an origin CORS_ORIGINS does not list is refused; one it lists is not', async () => {
  let refused;
  try {
    const ws = await rawSocket(cfg.b, cfg.tokens.alice, { Origin: cfg.deniedOrigin });
    ws.terminate();
    fail(`a socket with Origin ${cfg.deniedOrigin} was acknowledged`);
  } catch (e) {
    if (e instanceof CheckError) throw e;
    refused = e.message;
  }
  const ok = await rawSocket(cfg.b, cfg.tokens.alice, { Origin: cfg.allowedOrigin });
  ok.close();
  return `${cfg.deniedOrigin}: ${refused}; ${cfg.allowedOrigin}: acknowledged`;
});

// ---------------------------------------------------------------------------

let failed = 0;
const only = process.env.LIVE_ONLY ? new RegExp(process.env.LIVE_ONLY) : null;
const planned = checks.filter(({ name }) => !only || only.test(name));
// The plan first, so that a crash part-way shows as checks with no result.
process.stdout.write(JSON.stringify({ plan: planned.map(({ name }) => name) }) + '\n');
for (const { name, fn } of planned) {
  const t0 = Date.now();
  try {
    const detail = await fn();
    report(name, true, detail ?? '');
    log(`ok   ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    failed++;
    report(name, false, e instanceof CheckError ? e.message : e instanceof Error ? e.stack : `thrown: ${describe({ type: 'error', error: e })} ${show(e)}`);
    log(`FAIL ${name}: ${e?.message ?? show(e)}`);
  }
}
process.exit(failed ? 1 : 0);
