// Comparing incremental answers up to what their format lets vary: the
// ids, the order of independent payloads, of a list's entries and of
// errors, and how payloads are batched. Each answer is checked against
// its format's rules, then reduced to what does not vary.
import { isDeepStrictEqual } from 'node:util';

const key = (v) => JSON.stringify(v);
const sorted = (list) => [...list].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
const errs = (list) => sorted((list ?? []).map((e) => ({ message: e.message, path: e.path ?? null, code: e.extensions?.code ?? null })));
const isPrefix = (p, q) => p.length <= q.length && p.every((k, i) => q[i] === k);

// merge applies data at path in tree (data's fields into the object
// there), and reports whether there was an object there.
function merge(tree, path, data) {
  let at = tree;
  for (const k of path) at = at?.[k];
  if (at === null || typeof at !== 'object' || Array.isArray(at)) return false;
  if (data !== null) deepMerge(at, data);
  return true;
}

function deepMerge(into, add) {
  for (const [k, v] of Object.entries(add)) {
    if (v && typeof v === 'object' && into[k] && typeof into[k] === 'object') deepMerge(into[k], v);
    else into[k] = v;
  }
}

// hasNextRules checks hasNext: true on every payload but the last.
function hasNextRules(payloads, bad) {
  payloads.forEach((p, i) => {
    const last = i === payloads.length - 1;
    if (payloads.length > 1 && p.hasNext !== !last) bad.push(`payload ${i + 1}: hasNext ${p.hasNext}`);
  });
  if (payloads.length === 1 && 'hasNext' in payloads[0]) bad.push('a single payload with hasNext');
}

// canonicalV02 checks an answer in graphql-js 17's format and reduces it:
// each fragment (path, label, whether announced with the initial payload,
// its completion's errors), the entries delivered (at their full path),
// the data a client ends with, and for each fragment announced later the
// fragments completed with it whose path is above its own (one of them
// released it).
export function canonicalV02(payloads) {
  const bad = [];
  hasNextRules(payloads, bad);
  const [first, ...rest] = payloads;
  const tree = structuredClone(first.data);
  const frags = new Map();
  const announce = (p, i) => {
    for (const pe of p.pending ?? []) {
      if (frags.has(pe.id)) bad.push(`payload ${i + 1}: id ${pe.id} announced twice`);
      frags.set(pe.id, { path: pe.path, label: pe.label ?? null, initial: i === 0, at: i, completed: false, errors: null });
    }
  };
  announce(first, 0);
  if (payloads.length > 1 && !Array.isArray(first.pending)) bad.push('the initial payload has no pending list');
  const entries = [];
  const fragment = (id, i, what) => {
    const f = frags.get(id);
    if (!f || f.completed) bad.push(`payload ${i + 1}: ${what} of id ${id}, ${f ? 'completed before' : 'never announced'}`);
    return f;
  };
  rest.forEach((p, j) => {
    const i = j + 1;
    if ('data' in p || 'errors' in p) bad.push(`payload ${i + 1}: data or errors outside incremental`);
    announce(p, i);
    for (const inc of p.incremental ?? []) {
      const f = fragment(inc.id, i, 'incremental');
      if (!f) continue;
      const path = [...f.path, ...(inc.subPath ?? [])];
      if (!merge(tree, path, inc.data)) bad.push(`payload ${i + 1}: id ${inc.id}'s data at ${key(path)}, where the client has no object`);
      entries.push({ path, data: inc.data, errors: errs(inc.errors) });
    }
    for (const c of p.completed ?? []) {
      const f = fragment(c.id, i, 'completed');
      if (f) Object.assign(f, { completed: true, errors: c.errors ? errs(c.errors) : null, done: i });
    }
  });
  for (const [id, f] of frags) if (!f.completed) bad.push(`id ${id} at ${key(f.path)} never completed`);
  const all = [...frags.values()];
  const releasers = new Map();
  for (const f of all.filter((f) => !f.initial)) {
    const with_ = all.filter((o) => o.done === f.at && isPrefix(o.path, f.path)).map((o) => key([o.path, o.label]));
    if (with_.length === 0) bad.push(`${key([f.path, f.label])} announced with no fragment above it completed`);
    releasers.set(key([f.path, f.label]), [...(releasers.get(key([f.path, f.label])) ?? []), ...with_]);
  }
  return {
    bad,
    shape: {
      initial: { data: first.data, errors: errs(first.errors) },
      fragments: sorted(all.map((f) => ({ path: f.path, label: f.label, initial: f.initial, errors: f.errors }))),
      entries: sorted(entries),
      data: tree,
    },
    releasers,
  };
}

// canonical20220824 checks an answer in the 2022-08-24 format and reduces
// it: the incremental results (path, label, data, errors) and the data a
// client ends with.
export function canonical20220824(payloads) {
  const bad = [];
  hasNextRules(payloads, bad);
  const [first, ...rest] = payloads;
  const tree = structuredClone(first.data);
  const results = [];
  rest.forEach((p, j) => {
    if ('data' in p || 'pending' in p) bad.push(`payload ${j + 2}: data or pending outside incremental`);
    for (const r of p.incremental ?? []) {
      if (!Array.isArray(r.path)) bad.push(`payload ${j + 2}: an incremental result without a path`);
      else if (!merge(tree, r.path, r.data)) bad.push(`payload ${j + 2}: data at ${key(r.path)}, where the client has no object`);
      results.push({ path: r.path, label: r.label ?? null, data: r.data, errors: errs(r.errors) });
    }
  });
  return { bad, shape: { initial: { data: first.data, errors: errs(first.errors) }, results: sorted(results), data: tree } };
}

// differences lists where got (taskgraph's answer) differs from want
// (graphql-js's), both canonical, the format's rules included.
export function differences(got, want) {
  const out = got.bad.map((b) => `taskgraph: ${b}`).concat(want.bad.map((b) => `graphql-js: ${b}`));
  for (const [k, v] of Object.entries(want.shape)) {
    if (!isDeepStrictEqual(got.shape[k], v)) out.push(`${k}:\n  taskgraph  ${key(got.shape[k])?.slice(0, 1500)}\n  graphql-js ${key(v)?.slice(0, 1500)}`);
  }
  for (const [f, with_] of got.releasers ?? []) {
    const allowed = want.releasers?.get(f) ?? [];
    const stray = with_.filter((r) => !allowed.includes(r));
    if (with_.length > 0 && stray.length === with_.length) out.push(`${f} announced with the completion of ${stray.join(', ')}; graphql-js with ${allowed.join(', ') || 'the initial payload'}`);
  }
  return out;
}

// extensionRules checks what the canonical forms above leave out, the
// payloads' extensions: taskgraph's answer carries extensions.cost (what
// the operation cost, docs/limits.md) on its last payload and nothing else
// there or anywhere before; graphql-js's reference carries none. So the
// comparison is modulo exactly that one field.
export function extensionRules(got, want) {
  const bad = [];
  got.forEach((p, i) => {
    const last = i === got.length - 1;
    const keys = Object.keys(p.extensions ?? {});
    if (!last && keys.length) bad.push(`payload ${i + 1}: extensions ${key(keys)} before the last payload`);
    if (last && key(keys) !== key(['cost'])) bad.push(`the last payload's extensions are ${key(keys)}, not ["cost"]`);
  });
  const c = got.at(-1)?.extensions?.cost;
  if (c && !(Number.isInteger(c.requestedQueryCost) && Number.isInteger(c.actualQueryCost) && c.actualQueryCost > 0 &&
    c.requestedQueryCost >= c.actualQueryCost && typeof c.readUnits === 'number' && c.writeUnits === 0)) {
    bad.push(`extensions.cost ${key(c)}: want 0 < actualQueryCost <= requestedQueryCost, readUnits, writeUnits 0`);
  }
  want.forEach((p, i) => {
    if (p.extensions) bad.push(`graphql-js's payload ${i + 1} has extensions ${key(p.extensions)}`);
  });
  return bad;
}
