import { type Agent, request } from 'undici';
import { startRawFanoutServer } from './raw-fanout-peer.js';
import { WatcherPool } from './watch-pool.js';
import { benchAgent, collectServerGarbage, GC_ON_SIGNAL_NODE_ARGS, percentiles, progress, runBenchmark, startBenchPostgres, startServerProcess, stopServerAndDatabase } from './bench-support.js';

const CONSUMERS = Number(process.env.BENCH_CONSUMERS ?? 1000);
const WRITES_PER_SECOND = Number(process.env.BENCH_WRITES_PER_SECOND ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
/** The server's watch cache (PLINTH_WATCH_CACHE_SIZE) when set: small, the resumed watch catches up from the change log. */
const WATCH_CACHE_SIZE = process.env.BENCH_WATCH_CACHE_SIZE;
const CONCURRENCY = 8;
const APIS = '/apis/apis.plinth.dev/v1alpha1';
const VIEW = '/services/apiexport/provider/widgets/clusters/*/apis/example.com/v1/widgets';

async function call(base: string, agent: Agent, method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const res = await request(`${base}${path}`, { method, dispatcher: agent, body: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  return { status: res.statusCode, text: await res.body.text() };
}

async function must(base: string, agent: Agent, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Record<string, unknown>> {
  const r = await call(base, agent, method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text.slice(0, 300)}`);
  return JSON.parse(r.text) as Record<string, unknown>;
}

function metric(text: string, name: string): number {
  const m = new RegExp(`^${name} ([0-9.e+]+)`, 'm').exec(text);
  return m ? Number(m[1]) : Number.NaN;
}

/** Runs `work` over 0..n-1 with `concurrency` at a time. */
async function each(n: number, concurrency: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < n) await work(next++);
  }));
}

const widgetCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } }, status: { type: 'object', properties: { phase: { type: 'string' } } } } } } }],
  },
};

/**
 * APIs shared across tenants (docs/api-sharing.md): tenant `provider`
 * exports widgets.example.com, BENCH_CONSUMERS tenants bind it, and the
 * provider watches every binding tenant through the export's view while
 * BENCH_WRITES_PER_SECOND creates spread over the consumers run for
 * BENCH_SECONDS. Prints the view's watch delay (from each create's ack,
 * and from its start) and the server memory per binding.
 */
async function main(): Promise<void> {
  const pgPort = 58300 + (process.pid % 400);
  const apiPort = 19300 + (process.pid % 400);
  const db = await startBenchPostgres('api-sharing', pgPort);
  const server = await startServerProcess({ DATABASE_URL: db.url, PLINTH_DB_POOL_SIZE: '16', ...(WATCH_CACHE_SIZE ? { PLINTH_WATCH_CACHE_SIZE: WATCH_CACHE_SIZE } : {}) }, apiPort, { nodeArgs: GC_ON_SIGNAL_NODE_ARGS });
  const base = `https://127.0.0.1:${apiPort}`;
  const agent = await benchAgent({ connections: CONCURRENCY });
  const watchAgent = await benchAgent({ connections: 1 });
  const memory = async () => {
    await collectServerGarbage(server);
    const text = (await call(base, agent, 'GET', '/metrics')).text;
    return { rss: metric(text, 'plinth_process_resident_memory_bytes'), heap: metric(text, 'plinth_nodejs_heap_size_used_bytes') };
  };
  const consumer = (i: number) => `c${i}`;
  try {
    await must(base, agent, 'POST', '/apis/tenancy.plinth.dev/v1beta1/tenants', { apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'provider' } });
    await must(base, agent, 'POST', '/clusters/provider/apis/apiextensions.k8s.io/v1/customresourcedefinitions', JSON.parse(JSON.stringify(widgetCrd)));
    for (let i = 0; ; i++) {
      const crd = await must(base, agent, 'GET', '/clusters/provider/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com');
      const conditions = ((crd.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? []);
      if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (i > 300) throw new Error('the provider CRD was not established');
      await new Promise((r) => setTimeout(r, 100));
    }
    await must(base, agent, 'POST', `/clusters/provider${APIS}/apiexports`, { apiVersion: 'apis.plinth.dev/v1alpha1', kind: 'APIExport', metadata: { name: 'widgets' }, spec: { resources: [{ group: 'example.com', resource: 'widgets' }] } });

    progress(`creating ${CONSUMERS} consumer tenants`);
    let t0 = Date.now();
    await each(CONSUMERS, CONCURRENCY, async (i) => {
      await must(base, agent, 'POST', '/apis/tenancy.plinth.dev/v1beta1/tenants', { apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: consumer(i) } });
      if ((i + 1) % 100 === 0) progress(`${i + 1} tenants`);
    });
    const tenantSeconds = (Date.now() - t0) / 1000;
    const before = await memory();
    progress(`binding the export in ${CONSUMERS} tenants`);
    t0 = Date.now();
    await each(CONSUMERS, CONCURRENCY, async (i) => {
      const b = await must(base, agent, 'POST', `/clusters/${consumer(i)}${APIS}/apibindings`, { apiVersion: 'apis.plinth.dev/v1alpha1', kind: 'APIBinding', metadata: { name: 'widgets' }, spec: { reference: { export: { path: 'provider', name: 'widgets' } } } });
      if ((b.status as { phase?: string } | undefined)?.phase !== 'Bound') throw new Error(`binding in ${consumer(i)} is not Bound: ${JSON.stringify(b.status)}`);
      if ((i + 1) % 100 === 0) progress(`${i + 1} bindings`);
    });
    const bindSeconds = (Date.now() - t0) / 1000;
    // Every binding used once (a create in each), so each tenant's registry holds the bound resource.
    await each(CONSUMERS, CONCURRENCY, async (i) => {
      await must(base, agent, 'POST', `/clusters/${consumer(i)}/apis/example.com/v1/namespaces/default/widgets`, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'first' }, spec: { size: 1 } });
    });
    const after = await memory();

    // The provider's list across every binding tenant, then its watch from there.
    t0 = Date.now();
    const list = await must(base, agent, 'GET', VIEW);
    const listMs = Date.now() - t0;
    const listed = (list.items as unknown[]).length;
    const rv = (list.metadata as { resourceVersion: string }).resourceVersion;
    const sent = new Map<string, { start: number; ack?: number; seen?: number }>();
    const fromStart: number[] = [];
    const fromAck: number[] = [];
    let received = 0;
    let eventBytes = 0;
    let eventLines = 0;
    const watch = await request(`${base}${VIEW}?watch=1&resourceVersion=${rv}&allowWatchBookmarks=false`, { dispatcher: watchAgent });
    const reading = (async () => {
      let buf = '';
      for await (const chunk of watch.body) {
        const now = performance.now();
        buf += chunk.toString();
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (!line) continue;
          eventBytes += line.length + 1;
          eventLines++;
          const ev = JSON.parse(line) as { type: string; object: { metadata: { name: string; annotations?: Record<string, string> } } };
          if (ev.type !== 'ADDED') continue;
          const key = `${ev.object.metadata.annotations?.['tenancy.plinth.dev/tenant']}/${ev.object.metadata.name}`;
          const s = sent.get(key);
          if (!s || s.seen !== undefined) continue;
          received++;
          s.seen = now;
        }
      }
    })().catch(() => undefined);

    progress(`${WRITES_PER_SECOND} creates/s over ${CONSUMERS} tenants for ${SECONDS} s, the provider watching`);
    const total = WRITES_PER_SECOND * SECONDS;
    const inflight: Promise<void>[] = [];
    let failed = 0;
    const begin = performance.now();
    for (let i = 0; i < total; i++) {
      const due = begin + (i * 1000) / WRITES_PER_SECOND;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const tenant = consumer((i * 7919) % CONSUMERS);
      const name = `w${i}`;
      const entry: { start: number; ack?: number; seen?: number } = { start: performance.now() };
      sent.set(`${tenant}/${name}`, entry);
      inflight.push(
        call(base, agent, 'POST', `/clusters/${tenant}/apis/example.com/v1/namespaces/default/widgets`, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name }, spec: { size: 1 } }).then((r) => {
          if (r.status === 201) entry.ack = performance.now();
          else failed++;
        }),
      );
    }
    await Promise.all(inflight);
    const deadline = Date.now() + 30_000;
    while (received < total - failed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    watch.body.destroy();
    await reading;
    // An event may arrive before its create's answer: its delay from the ack is 0.
    for (const e of sent.values()) {
      if (e.seen === undefined) continue;
      fromStart.push(e.seen - e.start);
      if (e.ack !== undefined) fromAck.push(Math.max(0, e.seen - e.ack));
    }

    // The catch-up of a provider restarted since the list: a watch from the list's resourceVersion (the change log's
    // part of each binding tenant while that is older than the watch cache's window: BENCH_WATCH_CACHE_SIZE).
    progress(`a watch resumed from the list's resourceVersion (catching up ${total - failed} creates)`);
    const resumeStart = performance.now();
    const resumed = await request(`${base}${VIEW}?watch=1&resourceVersion=${encodeURIComponent(rv)}&allowWatchBookmarks=false`, { dispatcher: watchAgent });
    let caught = 0;
    let catchUpMs = NaN;
    await (async () => {
      let buf = '';
      for await (const chunk of resumed.body) {
        buf += chunk.toString();
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line && (JSON.parse(line) as { type: string }).type === 'ADDED') caught++;
        }
        if (caught >= total - failed) {
          catchUpMs = performance.now() - resumeStart;
          break;
        }
      }
    })().catch(() => undefined);
    resumed.body.destroy();

    const meanEvent = Math.round(eventBytes / Math.max(1, eventLines));
    progress(`the peer: a bare Node TLS server writing ${total} events of ${meanEvent} bytes at ${WRITES_PER_SECOND}/s to one watcher`);
    const bare = await bareFanout(meanEvent, WRITES_PER_SECOND, total);
    const a = percentiles(fromAck);
    const s = percentiles(fromStart);
    const mib = (b: number) => (b / 1024 / 1024).toFixed(1);
    console.log(`\napi-sharing benchmark: one export, ${CONSUMERS} binding tenants on one PostgreSQL, one replica\n`);
    console.log(`created ${CONSUMERS} tenants in ${tenantSeconds.toFixed(1)} s; bound the export in each in ${bindSeconds.toFixed(1)} s (${(CONSUMERS / bindSeconds).toFixed(0)} bindings/s)`);
    console.log(`server memory per binding (after a full collection, each binding used once): RSS ${((after.rss - before.rss) / CONSUMERS / 1024).toFixed(1)} KiB, V8 heap ${((after.heap - before.heap) / CONSUMERS / 1024).toFixed(1)} KiB (RSS ${mib(before.rss)} → ${mib(after.rss)} MiB)`);
    console.log(`the provider's list across all binding tenants: ${listed} widgets in ${listMs} ms`);
    console.log(`${total} creates at ${WRITES_PER_SECOND}/s spread over the tenants: ${failed} failed; the view's watch saw ${received}`);
    console.log(`a watch resumed from the list's resourceVersion (watch cache ${WATCH_CACHE_SIZE ?? 'default'} events): ${caught} of ${total - failed} creates caught up in ${catchUpMs.toFixed(0)} ms`);
    console.log(`watch delay from each create's ack: p50 ${a.p50.toFixed(1)} ms, p99 ${a.p99.toFixed(1)} ms (n=${a.n}); from its start: p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms`);
    console.log(`the peer, a bare Node TLS server handing one watcher the same events at the same rate: p50 ${bare.p50.toFixed(1)} ms, p99 ${bare.p99.toFixed(1)} ms (n=${bare.n}) from the send to the arrival`);
  } finally {
    await agent.close();
    await watchAgent.close();
    await stopServerAndDatabase(server, db);
  }
}

/**
 * The peer in the same run: a bare Node TLS server (bench/raw-fanout-server.ts) writing `count` events of
 * `eventBytes` at `perSecond` to one watcher connection, each when told over IPC; the delay from the IPC send
 * to the event's arrival is the least one Node thread takes to hand a watcher one event on this host.
 */
async function bareFanout(eventBytes: number, perSecond: number, count: number): Promise<{ p50: number; p99: number; n: number }> {
  const { child, port } = await startRawFanoutServer(eventBytes);
  const pool = new WatcherPool();
  try {
    await pool.open(`https://127.0.0.1:${port}`, '/watch', 1);
    const delays: number[] = [];
    const begin = performance.now();
    for (let seq = 1; seq <= count; seq++) {
      const wait = begin + (seq * 1000) / perSecond - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const t0 = performance.now();
      child.send({ seq });
      await pool.waitFor(seq, 2000);
      const got = pool.arrivalsOf(seq);
      if (got.length) delays.push(got[0] - t0);
    }
    return percentiles(delays);
  } finally {
    pool.close();
    child.kill();
  }
}

runBenchmark(main);
