// The live bench's subscribers with the npm clients our users use: N
// subscriptions, one a connection, with the graphql-ws client
// (graphql-transport-ws over `ws`) or the graphql-sse client (distinct
// connections mode, Node's fetch). A measuring tool, started by
// bench/livenode_test.go (TestLiveIdleFromOutside), never by CI.
//
// It speaks the Go subscribers' line protocol (bench/livesubs.go): the spec
// as JSON in TASKGRAPH_BENCH_SUBSCRIBERS ({URL, Token, Query, Vars,
// ProjectIDs, N}), the client in TASKGRAPH_BENCH_CLIENT ("graphql-ws" or
// "graphql-sse"). It prints "ready" once every subscription is sent, then
// answers its stdin: "count <title>" with "count <title> <k>", "seen <k>
// <title>" with "seen <title> <unix ns of the last arrival>" once k
// subscribers have an event whose task has that title; "rss" with "rss
// <bytes>". A subscription that ends is fatal.
import { createClient as createWSClient } from 'graphql-ws';
import { createClient as createSSEClient } from 'graphql-sse';
import WebSocket from 'ws';
import readline from 'node:readline';

const spec = JSON.parse(process.env.TASKGRAPH_BENCH_SUBSCRIBERS ?? '{}');
const kind = process.env.TASKGRAPH_BENCH_CLIENT ?? 'graphql-ws';
const auth = { Authorization: `Bearer ${spec.Token}` };
const OPENING = 64; // connections being opened at once

const seen = new Map(); // title -> {n, last}
const waiters = new Set();

function arrived(payload) {
  const title = payload?.data?.projectEvents?.task?.title;
  if (typeof title !== 'string') return;
  const s = seen.get(title) ?? { n: 0, last: 0n };
  s.n++;
  s.last = process.hrtime.bigint() - hrBase + wallBase;
  seen.set(title, s);
  for (const w of waiters) w();
}

// The wall clock in ns, as the Go side reads it, advanced by hrtime.
const wallBase = BigInt(Date.now()) * 1_000_000n;
const hrBase = process.hrtime.bigint();

function fatal(why) {
  process.stderr.write(`bench subscribers (${kind}): ${why}\n`);
  process.exit(1);
}

function varsOf(i) {
  const v = { ...(spec.Vars ?? {}) };
  if (spec.ProjectIDs?.length) v.p = spec.ProjectIDs[i % spec.ProjectIDs.length];
  return v;
}

const sink = (resolveOpen) => ({
  next: (v) => {
    resolveOpen?.();
    arrived(v);
  },
  error: (e) => fatal(`a subscription failed: ${e?.message ?? JSON.stringify(e)}`),
  complete: () => fatal('a subscription completed'),
});

// open starts subscription i and resolves once its connection is up (the
// graphql-ws client's connection_ack; the SSE stream's response).
function open(i) {
  return new Promise((resolve) => {
    const request = { query: spec.Query, variables: varsOf(i) };
    if (kind === 'graphql-ws') {
      const client = createWSClient({
        url: spec.URL.replace(/^http/, 'ws'),
        webSocketImpl: WebSocket,
        connectionParams: auth,
        retryAttempts: 0,
        lazy: true,
        on: { connected: () => resolve() },
      });
      client.subscribe(request, sink());
      return;
    }
    const client = createSSEClient({
      url: spec.URL,
      headers: auth,
      singleConnection: false,
      retryAttempts: 0,
      fetchFn: async (...args) => {
        const res = await fetch(...args);
        resolve();
        return res;
      },
    });
    client.subscribe(request, sink());
  });
}

let next = 0;
async function opener() {
  while (next < spec.N) await open(next++);
}
await Promise.all(Array.from({ length: Math.min(OPENING, spec.N) }, opener));
process.stdout.write('ready\n');

function count(title) {
  return seen.get(title)?.n ?? 0;
}

const rl = readline.createInterface({ input: process.stdin });
for await (const line of rl) {
  const [cmd, ...rest] = line.split(' ');
  if (cmd === 'count') {
    const title = rest.join(' ');
    process.stdout.write(`count ${title} ${count(title)}\n`);
  } else if (cmd === 'seen') {
    const want = Number(rest[0]);
    const title = rest.slice(1).join(' ');
    await new Promise((resolve) => {
      const check = () => {
        if (count(title) >= want) {
          waiters.delete(check);
          resolve();
        }
      };
      waiters.add(check);
      check();
    });
    process.stdout.write(`seen ${title} ${seen.get(title).last}\n`);
  } else if (cmd === 'rss') {
    process.stdout.write(`rss ${process.memoryUsage().rss}\n`);
  }
}
process.exit(0);
