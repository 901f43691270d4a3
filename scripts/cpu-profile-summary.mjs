#!/usr/bin/env node
// Summarises a V8 CPU profile (node --cpu-prof) of the API server by where
// the time goes: each sample is charged to the first frame, from the sampled
// function outwards, whose script or function name falls in a category
// (TLS, HTTP parsing, validation, managed fields, admission, authorization,
// audit, SQL, encoding...). Builtins (JSON.parse, the GC) are thus charged
// to the Plinth or library code that called them. Usage:
//   node scripts/cpu-profile-summary.mjs <file.cpuprofile> [top] [from-s] [to-s]
// from-s and to-s keep only the samples taken in that window (seconds since
// the profile started), e.g. one benchmark phase; without them, a busy-time
// timeline per second is printed to find the phases.
import { readFileSync } from 'node:fs';

/** Categories, first match wins, tested against "<url> <functionName>" of a frame. */
const CATEGORIES = [
  ['GC', /^ \(garbage collector\)$/],
  ['idle', /^ \(idle\)$/],
  ['authentication', /apps\/api\/src\/authn\//],
  ['authorization (RBAC)', /apps\/api\/src\/authz\//],
  ['audit', /apps\/api\/src\/audit\//],
  ['flow control', /apps\/api\/src\/flowcontrol\//],
  ['admission', /apps\/api\/src\/admission\/|libs\/admission\//],
  ['managed fields', /managed-?fields|field-manager|field-tracking|fieldmanager/i],
  ['validation and defaulting (strategy, schema)', /apps\/api\/src\/(schema|kinds|crd)\/|libs\/(schema|validation)|strategy/],
  ['request decoding (body, field validation)', /body-decoder|decode-object|streamed-body|libs\/apimachinery\/src\/(serializer|decode)/],
  ['response encoding', /response-writer|json-list-encoder|list-writer|negotiation|apps\/api\/src\/table\//],
  ['request info / routing', /request-info|find-my-way/],
  ['SQL client (pg, kysely)', /node_modules\/(pg|pg-protocol|pg-pool|pg-types|kysely)\//],
  ['storage layer', /libs\/storage\//],
  ['metrics', /prom-client|observability/],
  ['logging', /node_modules\/(pino|sonic-boom)/],
  ['handlers and generic store', /apps\/api\/src\/(api|handlers|store|pipeline)\//],
  ['other Plinth code', /\/(apps|libs)\//],
  ['NestJS', /node_modules\/@nestjs\//],
  ['Fastify', /node_modules\/(fastify|@fastify|avvio|light-my-request|fast-json-stringify|secure-json-parse)/],
  ['AsyncResource.bind (Fastify, per request body; Node 20 builds two deprecation wrappers each)', /node:async_hooks|node:internal\/util deprecate$/],
  // Node encrypts TLS records inside the socket's native writev: TLS's cost shows there, not under node:tls.
  ['socket writes (TLS encryption + syscall)', /^ (writev|writeBuffer|writeUtf8String|writeLatin1String)$/],
  ['TLS', /node:(_tls_wrap|_tls_common|tls|internal\/tls)/],
  ['HTTP (node:http)', /node:(_http_|http|internal\/http)/],
  ['streams, sockets, timers', /node:(internal\/streams|net|stream|internal\/timers|timers|internal\/stream_base)/],
  ['other node internals', /node:/],
];

function categoryOf(frame) {
  const key = `${frame.url} ${frame.functionName}`;
  for (const [name, re] of CATEGORIES) if (re.test(key)) return name;
  return undefined;
}

const [file, topArg, fromArg, toArg] = process.argv.slice(2);
const windowFrom = fromArg === undefined ? -Infinity : Number(fromArg) * 1e6;
const windowTo = toArg === undefined ? Infinity : Number(toArg) * 1e6;
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const memo = new Map();
function chargeOf(id) {
  if (memo.has(id)) return memo.get(id);
  const n = byId.get(id);
  let c = categoryOf(n.callFrame);
  if (!c) c = parent.has(id) ? chargeOf(parent.get(id)) : `native (${n.callFrame.functionName || 'root'})`;
  memo.set(id, c);
  return c;
}
const totals = new Map();
const selfByFn = new Map();
let all = 0;
let at = 0;
const timeline = [];
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] ?? 0;
  at += dt;
  const second = Math.floor(at / 1e6);
  if (byId.get(id).callFrame.functionName !== '(idle)') timeline[second] = (timeline[second] ?? 0) + dt;
  if (at < windowFrom || at > windowTo) return;
  const c = chargeOf(id);
  totals.set(c, (totals.get(c) ?? 0) + dt);
  if (c !== 'idle') {
    all += dt;
    const f = byId.get(id).callFrame;
    const name = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(node_modules|dist)\//, '')}:${f.lineNumber + 1}`;
    selfByFn.set(name, (selfByFn.get(name) ?? 0) + dt);
  }
});
if (fromArg === undefined) console.log(`busy ms per second: ${Array.from(timeline, (us, s) => `${s}:${Math.round((us ?? 0) / 1000)}`).join(' ')}`);
console.log(`busy ${(all / 1e6).toFixed(2)} s of ${((Math.min(windowTo, at) - Math.max(0, windowFrom)) / 1e6).toFixed(2)} s profiled`);
for (const [c, us] of [...totals].sort((a, b) => b[1] - a[1])) {
  if (c === 'idle') continue;
  console.log(`${((us / all) * 100).toFixed(1).padStart(5)}%  ${c}`);
}
console.log('\ntop functions by self time:');
for (const [f, us] of [...selfByFn].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg ?? 25))) console.log(`${((us / all) * 100).toFixed(1).padStart(5)}%  ${f}`);
