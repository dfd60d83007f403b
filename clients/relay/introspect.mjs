// Prints the server's schema (its introspection at the /query URL given as
// the argument) as SDL, for relay-compiler (relay.config.json's schema).
// scripts/clients writes it to clients/relay/schema.graphql.
import { buildClientSchema, getIntrospectionQuery, printSchema } from 'graphql';

const url = process.argv[2];
if (!url) {
  console.error("usage: node clients/relay/introspect.mjs <the server's /query URL>");
  process.exit(2);
}
const res = await fetch(url, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify({ query: getIntrospectionQuery() }),
});
const body = await res.json();
if (!res.ok || body.errors || !body.data) {
  console.error(`introspection failed: HTTP ${res.status} ${JSON.stringify(body).slice(0, 500)}`);
  process.exit(1);
}
process.stdout.write(printSchema(buildClientSchema(body.data)) + '\n');
