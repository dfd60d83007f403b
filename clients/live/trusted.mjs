// The graphql-ws npm client against a server started in production with a
// trusted-documents manifest: over the WebSocket, what is not in the
// manifest runs nothing, and what is runs when named by its documentId or
// by its persisted-query hash, as over POST.
//
// Run by TestLiveClientsInProduction (live_clients_test.go), which starts
// the instance and passes in LIVE_CONFIG its /query URL, a token, a project
// and a task, and the manifest's documents by name with their ids. Prints a
// {"plan": [names]} line, then one {"check", "ok", "detail"} line a check,
// as run.mjs does.
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

const cfg = JSON.parse(process.env.LIVE_CONFIG ?? '{}');
const WAIT_MS = cfg.waitMs ?? 20_000; // a failure guard, never a pace

class CheckError extends Error {}
const fail = (msg) => {
  throw new CheckError(msg);
};
const expect = (cond, msg) => {
  if (!cond) fail(msg);
};
const show = (v) => {
  if (v && typeof v === 'object' && !Array.isArray(v) && (v.code !== undefined || v.message !== undefined)) {
    return `${v.constructor?.name ?? 'object'} ${v.code ?? ''} ${v.reason ?? v.message ?? ''}`;
  }
  return JSON.stringify(v)?.slice(0, 600);
};
const codes = (errors) => (errors ?? []).map((e) => e.extensions?.code);

function wsURL(httpURL) {
  const u = new URL(httpURL);
  u.protocol = 'ws:';
  return u.href;
}

const client = createClient({
  url: wsURL(cfg.url),
  webSocketImpl: WebSocket,
  connectionParams: { Authorization: `Bearer ${cfg.token}` },
  retryAttempts: 0,
  lazy: false,
  onNonLazyError: () => {},
});

// once runs one operation to its end and returns its results and how it
// ended: {results, error} (error: what the sink's error got).
function once(payload) {
  return new Promise((resolve) => {
    const results = [];
    const timer = setTimeout(() => resolve({ results, error: `nothing within ${WAIT_MS} ms` }), WAIT_MS);
    client.subscribe(payload, {
      next: (r) => results.push(r),
      error: (error) => {
        clearTimeout(timer);
        resolve({ results, error });
      },
      complete: () => {
        clearTimeout(timer);
        resolve({ results, error: null });
      },
    });
  });
}

// refusedWith returns the error codes an operation was refused with: a
// result carrying errors and no data, or the error message's errors.
function refusedCodes({ results, error }) {
  if (Array.isArray(error)) return codes(error);
  expect(error === null, `the operation failed with ${show(error)}`);
  expect(results.length === 1 && !results[0].data, `want one refusal without data, got ${show(results)}`);
  return codes(results[0].errors);
}

function ranOnce({ results, error }) {
  expect(error === null, `the operation failed with ${show(error)}`);
  expect(results.length === 1 && !results[0].errors, `want one result without errors, got ${show(results)}`);
  return results[0].data;
}

const checks = [];
const check = (name, fn) => checks.push({ name, fn });

check('an untrusted mutation over the WebSocket is refused with TRUSTED_DOCUMENT_REQUIRED and changes nothing', async () => {
  const got = refusedCodes(await once({ query: 'mutation { updateProfile(input: {name: "Mallory"}) { id name } }' }));
  expect(show(got) === show(['TRUSTED_DOCUMENT_REQUIRED']), `codes ${show(got)}`);
  const untrustedQuery = refusedCodes(await once({ query: '{ me { id email } }' }));
  expect(show(untrustedQuery) === show(['TRUSTED_DOCUMENT_REQUIRED']), `an untrusted query: codes ${show(untrustedQuery)}`);
  // The socket stays open, and the name is what it was.
  const me = ranOnce(await once({ query: '', documentId: cfg.ids.me }));
  expect(me.me.name === 'Alice Example', `after the refusal: ${show(me)}`);
  return `refused ${got}; the same socket then runs the trusted Me: ${me.me.name}`;
});

check('a trusted query runs by documentId and by its persisted-query hash', async () => {
  const byID = ranOnce(await once({ query: '', documentId: cfg.ids.me }));
  const byHash = ranOnce(await once({
    query: '',
    extensions: { persistedQuery: { version: 1, sha256Hash: cfg.ids.me.replace('sha256:', '') } },
  }));
  expect(byID.me.id === byHash.me.id && byID.me.name === 'Alice Example', `${show(byID)} / ${show(byHash)}`);
  const unknown = refusedCodes(await once({ query: '', documentId: 'sha256:' + '0'.repeat(64) }));
  expect(show(unknown) === show(['PERSISTED_QUERY_NOT_FOUND']), `an unknown documentId: ${show(unknown)}`);
  return `documentId and hash both answered ${byID.me.name}; an unknown id: ${unknown}`;
});

check('a trusted subscription by documentId delivers the change a trusted mutation makes', async () => {
  const events = [];
  let ended = null;
  let wake = () => {};
  const dispose = client.subscribe(
    { query: '', documentId: cfg.ids.events, variables: { projectId: cfg.project } },
    {
      next: (r) => {
        events.push(r);
        wake();
      },
      error: (e) => {
        ended = e;
        wake();
      },
      complete: () => {
        ended = 'complete';
        wake();
      },
    },
  );
  try {
    // A stream starts about when it is subscribed: keep changing the task
    // until its change arrives (each answered version is awaited).
    const deadline = Date.now() + WAIT_MS;
    for (let i = 1; ; i++) {
      expect(Date.now() < deadline, `no event within ${WAIT_MS} ms; got ${show(events)} ended ${show(ended)}`);
      const res = ranOnce(await once({ query: '', documentId: cfg.ids.updateTask, variables: { input: { id: cfg.task, title: `Trusted ${i}` } } }));
      const want = res.updateTask.version;
      const seen = () => events.some((e) => e.data?.projectEvents?.task?.version === want);
      if (!seen()) await new Promise((r) => ((wake = r), setTimeout(r, 250)));
      expect(ended === null, `the subscription ended: ${show(ended)} after ${show(events)}`);
      const bad = events.find((e) => e.errors);
      expect(!bad, `an event with errors: ${show(bad)}`);
      if (seen()) return `the event of version ${want} (${res.updateTask.title}) arrived`;
    }
  } finally {
    dispose();
  }
});

let failed = 0;
process.stdout.write(JSON.stringify({ plan: checks.map(({ name }) => name) }) + '\n');
for (const { name, fn } of checks) {
  try {
    process.stdout.write(JSON.stringify({ check: name, ok: true, detail: (await fn()) ?? '' }) + '\n');
  } catch (e) {
    failed++;
    process.stdout.write(JSON.stringify({ check: name, ok: false, detail: e instanceof CheckError ? e.message : String(e?.stack ?? show(e)) }) + '\n');
  }
}
await client.dispose();
process.exit(failed ? 1 : 0);
