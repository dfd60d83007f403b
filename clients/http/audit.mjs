// graphql-http's serverAudits, the reference suite of the GraphQL over
// HTTP spec (every MUST, SHOULD and MAY it checks), against a running
// server, a bearer token on every request.
//
// Run by TestGraphQLOverHTTPAudit (http_audit_test.go), which starts an
// instance and passes in LIVE_CONFIG its /query URL and a token. Prints a
// {"plan": [names]} line, then one {"check", "ok", "detail"} line an audit
// (its name starts with its id), as clients/live/run.mjs does.
import { serverAudits } from 'graphql-http';

const cfg = JSON.parse(process.env.LIVE_CONFIG ?? '{}');
if (!cfg.url || !cfg.token) {
  console.error('LIVE_CONFIG needs url and token');
  process.exit(2);
}

const fetchFn = (input, init = {}) => {
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${cfg.token}`);
  return fetch(input, { ...init, headers });
};

const audits = serverAudits({ url: cfg.url, fetchFn });
const name = (a) => `${a.id} ${a.name}`;
console.log(JSON.stringify({ plan: audits.map(name) }));

let failed = 0;
for (const a of audits) {
  let line;
  try {
    const r = await a.fn();
    if (r.status === 'ok') {
      line = { check: name(a), ok: true, detail: 'ok' };
    } else {
      let body = '';
      try {
        body = r.response ? (await r.response.text()).slice(0, 400) : '';
      } catch {
        body = '(body already read)';
      }
      const status = r.response ? r.response.status : '';
      line = { check: name(a), ok: false, detail: `${r.id} ${r.status}: ${r.reason} (HTTP ${status} ${body})` };
    }
  } catch (err) {
    line = { check: name(a), ok: false, detail: `${a.id} failed to run: ${err?.stack ?? err}` };
  }
  if (!line.ok) failed++;
  console.log(JSON.stringify(line));
}
console.error(`graphql-http serverAudits: ${audits.length - failed} of ${audits.length} ok`);
