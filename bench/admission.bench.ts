import { request } from 'undici';
import { allow, makeCertificates, patch, TestWebhookServer, webhookConfiguration } from '../test/admission/support/webhook-server.js';
import { percentiles, progress, runLoad, startBenchPostgres, runBenchmark, startServerProcess, stopServerAndDatabase, benchAgent } from './bench-support.js';

const CONCURRENCY = 32;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const LATENCY_SECONDS = Math.max(2, SECONDS / 2);
const VALUE = 'x'.repeat(256);
const REFRESH_MS = 500;

interface Phase {
  name: string;
  opsPerSec: number;
  p50: number;
  p99: number;
  errors: number;
}

/**
 * Admission webhook benchmark: configmap creates through the API with no
 * webhook, with one mutating webhook (a JSON patch adding a label), and
 * with that plus one validating webhook, both served over HTTPS by a local
 * Node server. Prints creates/s and p50/p99 at 32 clients per
 * configuration. The per-webhook cost is measured by one client creating
 * round-robin in three namespaces at once — selected by no webhook, by the
 * mutating one, by both — so that the three p50s share one time window and
 * the noise of a shared machine cancels out.
 */
async function main(): Promise<void> {
  const pgPort = 57900 + (process.pid % 90);
  const apiPort = 18900 + (process.pid % 90);
  const db = await startBenchPostgres('admission', pgPort);
  progress('generating a throw-away CA and starting the HTTPS webhook server');
  const certs = await makeCertificates();
  const hooks = await TestWebhookServer.start(certs, { record: false });
  hooks.on('/mutate', () => patch([{ op: 'add', path: '/metadata/labels', value: { mutated: 'yes' } }]));
  hooks.on('/validate', () => allow());
  const server = await startServerProcess({ DATABASE_URL: db.url, PLINTH_DB_POOL_SIZE: '32', PLINTH_WEBHOOK_TRUSTED_TENANTS: 'default', PLINTH_WEBHOOK_REFRESH_MS: String(REFRESH_MS) }, apiPort);
  const base = `https://127.0.0.1:${apiPort}`;
  const agent = await benchAgent({ connections: CONCURRENCY, pipelining: 1, keepAliveTimeout: 30000 });
  const call = async (method: 'POST' | 'DELETE', path: string, body?: unknown) => {
    const res = await request(`${base}${path}`, { method, body: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': 'application/json' }, dispatcher: agent });
    await res.body.arrayBuffer();
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode}`);
  };
  let seq = 0;
  const create = (ns: string) => call('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: `cm-${seq++}` }, data: { v: VALUE } });
  const phases: Phase[] = [];
  const measure = async (name: string, ns: string) => {
    progress(`${name}: warm-up`);
    await runLoad(4, 1000, () => create(ns));
    progress(`${name}: ${CONCURRENCY} clients for ${SECONDS}s`);
    const run = await runLoad(CONCURRENCY, SECONDS * 1000, () => create(ns));
    const p = percentiles(run.latencies);
    phases.push({ name, opsPerSec: run.opsPerSec, p50: p.p50, p99: p.p99, errors: run.errors });
  };
  const settle = () => new Promise((r) => setTimeout(r, 2 * REFRESH_MS + 200));
  try {
    await call('POST', '/api/v1/namespaces', { metadata: { name: 'none' } });
    await call('POST', '/api/v1/namespaces', { metadata: { name: 'mut', labels: { m: 'yes' } } });
    await call('POST', '/api/v1/namespaces', { metadata: { name: 'both', labels: { m: 'yes', v: 'yes' } } });
    await measure('no webhook', 'none');
    await call('POST', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', webhookConfiguration('Mutating', 'bench', [
      { name: 'mutate.bench.plinth', url: hooks.url('/mutate'), caBundle: certs.caBundle, namespaceSelector: { matchLabels: { m: 'yes' } } },
    ]));
    await settle();
    await measure('1 mutating webhook', 'mut');
    await call('POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', webhookConfiguration('Validating', 'bench', [
      { name: 'validate.bench.plinth', url: hooks.url('/validate'), caBundle: certs.caBundle, namespaceSelector: { matchLabels: { v: 'yes' } } },
    ]));
    await settle();
    await measure('1 mutating + 1 validating', 'both');
    progress(`per-webhook cost: 1 client, round-robin over the three namespaces for ${LATENCY_SECONDS * 2}s`);
    const samples: Record<string, number[]> = { none: [], mut: [], both: [] };
    const until = Date.now() + LATENCY_SECONDS * 2000;
    for (let i = 0; Date.now() < until; i++) {
      const ns = ['none', 'mut', 'both'][i % 3];
      const t0 = process.hrtime.bigint();
      await create(ns);
      samples[ns].push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    const solo = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, percentiles(v).p50])) as Record<string, number>;

    console.log('\nadmission webhook benchmark (this machine; webhooks over HTTPS on loopback, same machine)\n');
    console.log(`configuration                    creates/s   p50 ms   p99 ms   errors   (${CONCURRENCY} clients, ${SECONDS}s each)`);
    for (const p of phases) {
      console.log(`${p.name.padEnd(31)} ${p.opsPerSec.toFixed(0).padStart(9)}  ${p.p50.toFixed(2).padStart(7)}  ${p.p99.toFixed(2).padStart(7)}   ${p.errors}`);
    }
    console.log(`\n1-client p50 (interleaved): no webhook ${solo.none.toFixed(2)} ms, mutating ${solo.mut.toFixed(2)} ms, mutating + validating ${solo.both.toFixed(2)} ms`);
    console.log(
      `per-webhook p50 cost: mutating ${(solo.mut - solo.none).toFixed(2)} ms, validating ${(solo.both - solo.mut).toFixed(2)} ms (target <= 2 ms each)`,
    );
  } finally {
    await agent.close();
    await hooks.close();
    await stopServerAndDatabase(server, db);
  }
}

runBenchmark(main);
