// Prints the schema as urql's graphcache reads it: the server's
// introspection (at the /query URL given as the argument), minified by
// @urql/introspection to the types the cache needs (objects, interfaces,
// their fields and arguments). scripts/clients writes it to
// clients/urql/schema.json.
import { getIntrospectionQuery } from 'graphql';
import { minifyIntrospectionQuery } from '@urql/introspection';

const url = process.argv[2];
if (!url) {
  console.error('usage: node clients/urql/introspect.mjs <the server\'s /query URL>');
  process.exit(2);
}
const res = await fetch(url, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify({ query: getIntrospectionQuery({ descriptions: false }) }),
});
const body = await res.json();
if (!res.ok || body.errors || !body.data) {
  console.error(`introspection failed: HTTP ${res.status} ${JSON.stringify(body).slice(0, 500)}`);
  process.exit(1);
}
process.stdout.write(JSON.stringify(minifyIntrospectionQuery(body.data), null, 1) + '\n');
