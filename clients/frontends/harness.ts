// The harness of the client checks (run.ts): the server's configuration,
// the checks' plan and results (one JSON line each, as clients/live/run.mjs
// prints them, read by runNodeChecks in the Go tests), guards, and the
// console: every console.warn and console.error printed while a check runs
// fails it, with the text, so a library's warning is a failure.
//
// A file of checks (apollo.ts, urql.ts, relay.ts, defer.ts) calls
// check() at its top level and is imported by run.ts.

import { format } from 'node:util';

/** What the Go test passes in LIVE_CONFIG. */
export interface Config {
  /** The /query URL of the instance. */
  url: string;
  /** Bearer tokens by viewer. */
  tokens: Record<string, string>;
  /** The failure guard of every wait, in milliseconds (never a pace). */
  waitMs: number;
}

export const cfg: Config = JSON.parse(process.env.LIVE_CONFIG ?? '{}');
const WAIT_MS = cfg.waitMs ?? 20_000;

/** A check's failure: its message is the check's result. */
export class CheckError extends Error {}

export function fail(msg: string): never {
  throw new CheckError(msg);
}

export function expect(cond: unknown, msg: string | (() => string)): asserts cond {
  if (!cond) fail(typeof msg === 'function' ? msg() : msg);
}

/** show prints a value for a failure message, cut at 800 characters. */
export const show = (v: unknown): string => (JSON.stringify(v) ?? String(v)).slice(0, 800);

/** guard rejects when p has not settled after the wait guard. */
export function guard<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CheckError(`${what}: nothing within ${WAIT_MS} ms`)), WAIT_MS);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** until waits for cond to hold, checking it after every event loop turn. */
export async function until(cond: () => boolean, what: string | (() => string)): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > WAIT_MS) fail(`${typeof what === 'function' ? what() : what}: not within ${WAIT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** settle lets pending promises and timers of the libraries run. */
export const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 50));

// ---------------------------------------------------------------- console

/** A console.warn or console.error printed while a check ran. */
export interface Printed {
  level: 'warn' | 'error';
  text: string;
}

let printed: Printed[] = [];

// Every library prints its development warnings through these two.
for (const level of ['warn', 'error'] as const) {
  console[level] = (...args: unknown[]) => {
    printed.push({ level, text: format(...args) });
  };
}

// ---------------------------------------------------------------- network

/**
 * Requests is what a client sent: each request's operation name, the media
 * type of each answer, and when each answer's body was read to its end or
 * cancelled by the client.
 */
export class Requests {
  readonly names: string[] = [];
  readonly contentTypes: string[] = [];
  private readonly ended: Promise<void>[] = [];

  /** allEnded settles once the body of every answer so far is read to its end or cancelled. */
  allEnded(): Promise<void> {
    return Promise.all(this.ended).then(() => undefined);
  }

  /** fetch sends a request with viewer's token and records it. */
  fetchAs(viewer: string): typeof fetch {
    const token = cfg.tokens[viewer];
    if (!token) fail(`no token for ${viewer}`);
    return (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set('Authorization', `Bearer ${token}`);
      let name = '?';
      try {
        name = init?.body
          ? (JSON.parse(String(init.body)).operationName ?? '(anonymous)')
          : (new URL(String(input)).searchParams.get('operationName') ?? '(anonymous)'); // GET
      } catch {
        // not a JSON body: recorded as '?'
      }
      this.names.push(name);
      return fetch(input, { ...init, headers }).then((res) => {
        this.contentTypes.push(res.headers.get('content-type') ?? '');
        if (!res.body) return res;
        // The same body, read through, telling when it ends.
        let ended!: () => void;
        this.ended.push(new Promise<void>((resolve) => (ended = resolve)));
        const reader = res.body.getReader();
        const body = new ReadableStream<Uint8Array>({
          async pull(c) {
            const r = await reader.read().catch((e: unknown) => {
              ended();
              throw e;
            });
            if (r.done) {
              ended();
              c.close();
            } else c.enqueue(r.value);
          },
          cancel(reason) {
            ended();
            return reader.cancel(reason);
          },
        });
        return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
      });
    };
  }

  /** since returns the names recorded after the first n. */
  since(n: number): string[] {
    return this.names.slice(n);
  }
}

/** gql sends a query as viewer without any client, for what checks compare with. */
export async function post<T = any>(viewer: string, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await fetch(cfg.url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${cfg.tokens[viewer]}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: T; errors?: unknown[] };
  expect(res.ok && !body.errors && body.data, () => `${query.slice(0, 80)}…: HTTP ${res.status} ${show(body)}`);
  return body.data;
}

// ---------------------------------------------------------------- checks

type CheckFn = (printed: () => Printed[]) => Promise<string | void>;

interface Check {
  name: string;
  fn: CheckFn;
  /** The check reads what was printed itself (a control run without the configuration). */
  ownsConsole: boolean;
}

const checks: Check[] = [];

/**
 * check adds a check: fn's returned text is its detail; a thrown error, or
 * anything printed to console.warn or console.error while it runs, fails it.
 */
export function check(name: string, fn: () => Promise<string | void>): void {
  checks.push({ name, fn, ownsConsole: false });
}

/**
 * controlCheck adds a check that runs something without the configuration
 * and asserts what the library printed (printed() returns it so far): proof
 * that the warnings the other checks fail on are captured, as real text.
 */
export function controlCheck(name: string, fn: (printed: () => Printed[]) => Promise<string | void>): void {
  checks.push({ name, fn, ownsConsole: true });
}

/** run prints the plan, runs every check in order and exits 1 if any failed. */
export async function run(): Promise<void> {
  const write = (v: unknown) => process.stdout.write(JSON.stringify(v) + '\n');
  write({ plan: checks.map((c) => c.name) });
  let failed = 0;
  for (const c of checks) {
    printed = [];
    let result: { ok: boolean; detail: string };
    try {
      const detail = (await c.fn(() => printed)) ?? '';
      await settle(); // what the libraries print after the last await
      result = { ok: true, detail };
      if (!c.ownsConsole && printed.length > 0) {
        result = { ok: false, detail: `the library printed:\n${printed.map((p) => `console.${p.level}: ${p.text}`).join('\n')}` };
      }
    } catch (e) {
      const msg = e instanceof CheckError ? e.message : String((e as Error)?.stack ?? show(e));
      const also = printed.length > 0 && !c.ownsConsole ? `\nand printed:\n${printed.map((p) => `console.${p.level}: ${p.text}`).join('\n')}` : '';
      result = { ok: false, detail: msg + also };
    }
    if (!result.ok) failed++;
    write({ check: c.name, ...result });
  }
  process.exit(failed ? 1 : 0);
}
