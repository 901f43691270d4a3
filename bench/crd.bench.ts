import { request } from 'undici';
import { percentiles, progress, runLoad, startBenchPostgres, runBenchmark, startServerProcess, stopServerAndDatabase, benchAgent } from './bench-support.js';

/**
 * Custom resource create throughput against configmaps of the same size in
 * the same run: a CR whose schema has 30 fields and five CEL rules (all
 * compiled once per CRD version) versus a ConfigMap whose body has the same
 * byte length. Rounds alternate (cm, cr, cm, cr) so drift hits both.
 * Prints creates/s of each and their ratio (target ≥ 0.7).
 */

const CONCURRENCY = 32;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

function fields(): Record<string, unknown> {
  const props: Record<string, unknown> = {};
  for (let i = 0; i < 10; i++) props[`text${i}`] = { type: 'string', maxLength: 64, pattern: '^[a-z0-9-]*$' };
  for (let i = 0; i < 8; i++) props[`count${i}`] = { type: 'integer', minimum: 0, maximum: 100000 };
  for (let i = 0; i < 4; i++) props[`flag${i}`] = { type: 'boolean' };
  props.mode = { type: 'string', enum: ['fast', 'safe', 'off'] };
  props.owner = { type: 'string' };
  props.prefix = { type: 'string' };
  props.name = { type: 'string' };
  props.minReplicas = { type: 'integer' };
  props.maxReplicas = { type: 'integer' };
  props.ports = { type: 'array', maxItems: 16, items: { type: 'integer' } };
  props.labels = { type: 'object', additionalProperties: { type: 'string' } };
  return props;
}

const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'benches.bench.example.com' },
  spec: {
    group: 'bench.example.com',
    scope: 'Namespaced',
    names: { plural: 'benches', singular: 'bench', kind: 'Bench' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['name', 'prefix'],
                properties: fields(),
                'x-kubernetes-validations': [
                  { rule: 'self.minReplicas <= self.maxReplicas', message: 'minReplicas must not exceed maxReplicas' },
                  { rule: 'self.name.startsWith(self.prefix)', message: 'name must start with prefix' },
                  { rule: 'self.ports.all(p, p > 0 && p < 65536)', message: 'ports must be valid' },
                  { rule: '!has(self.owner) || self.owner.matches("^[a-z]+@example\\\\.com$")', message: 'owner must be an example.com address' },
                  { rule: 'self.mode != "off" || self.maxReplicas == 0', messageExpression: "'mode off needs 0 replicas, got %d'.format([self.maxReplicas])" },
                ],
              },
            },
          },
        },
      },
    ],
  },
};

function crBody(name: string): string {
  const spec: Record<string, unknown> = { mode: 'fast', owner: 'team@example.com', prefix: 'svc', name: `svc-${name}`, minReplicas: 1, maxReplicas: 3, ports: [80, 443, 8080] };
  for (let i = 0; i < 10; i++) spec[`text${i}`] = `value-${i}-abcdefghij`;
  for (let i = 0; i < 8; i++) spec[`count${i}`] = i * 100;
  for (let i = 0; i < 4; i++) spec[`flag${i}`] = i % 2 === 0;
  spec.labels = { app: 'bench', tier: 'backend' };
  return JSON.stringify({ apiVersion: 'bench.example.com/v1', kind: 'Bench', metadata: { name, namespace: 'bench' }, spec });
}

function configMapBody(name: string, size: number): string {
  const base = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'bench' }, data: { v: '' } });
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'bench' }, data: { v: 'x'.repeat(Math.max(0, size - base.length)) } });
}

async function main(): Promise<void> {
  const pgPort = 57900 + (process.pid % 400);
  const apiPort = 18900 + (process.pid % 400);
  const db = await startBenchPostgres('crd', pgPort);
  const server = await startServerProcess({ DATABASE_URL: db.url, PLINTH_DB_POOL_SIZE: '32' }, apiPort);
  const base = `https://127.0.0.1:${apiPort}`;
  const agent = await benchAgent({ connections: CONCURRENCY, pipelining: 1, keepAliveTimeout: 30000 });
  const call = async (method: 'GET' | 'POST', path: string, body?: string): Promise<unknown> => {
    const res = await request(`${base}${path}`, { method, body, headers: { 'content-type': 'application/json' }, dispatcher: agent });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`);
    return JSON.parse(text);
  };
  try {
    await call('POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'bench' } }));
    await call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', JSON.stringify(crd));
    for (let i = 0; ; i++) {
      try {
        await call('GET', '/apis/bench.example.com/v1/namespaces/bench/benches');
        break;
      } catch (err) {
        if (i > 100) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    await call('POST', '/apis/bench.example.com/v1/namespaces/bench/benches', crBody('probe'));
    const size = crBody('cr-000000').length;
    progress(`CR body ${size} bytes; configmap bodies padded to the same size`);
    const rounds: Array<{ kind: 'cm' | 'cr'; ops: number; lat: number[]; errors: number }> = [];
    let n = 0;
    for (const kind of ['cm', 'cr', 'cm', 'cr'] as const) {
      progress(`${kind === 'cm' ? 'configmap' : 'custom resource'} creates: ${CONCURRENCY} clients for ${SECONDS / 2}s`);
      const run = await runLoad(CONCURRENCY, (SECONDS * 1000) / 2, (i) => {
        const name = `${kind}-${n}-${i}`;
        return kind === 'cm'
          ? call('POST', '/api/v1/namespaces/bench/configmaps', configMapBody(name, size)).then(() => undefined)
          : call('POST', '/apis/bench.example.com/v1/namespaces/bench/benches', crBody(name)).then(() => undefined);
      });
      n++;
      rounds.push({ kind, ops: run.opsPerSec, lat: run.latencies, errors: run.errors });
    }
    const avg = (k: 'cm' | 'cr') => rounds.filter((r) => r.kind === k).reduce((t, r) => t + r.ops, 0) / 2;
    const lat = (k: 'cm' | 'cr') => percentiles(rounds.filter((r) => r.kind === k).flatMap((r) => r.lat));
    const errs = (k: 'cm' | 'cr') => rounds.filter((r) => r.kind === k).reduce((t, r) => t + r.errors, 0);
    const cm = avg('cm');
    const cr = avg('cr');
    console.log('\nCRD create benchmark (this machine, durable PostgreSQL)\n');
    console.log('operation                                           creates/s   p50 ms   p99 ms   errors');
    for (const [name, k, ops] of [
      [`ConfigMap create (${size} B body)`, 'cm', cm],
      ['Custom resource create (30 fields, 5 CEL rules)', 'cr', cr],
    ] as const) {
      const p = lat(k);
      console.log(`${name.padEnd(51)} ${ops.toFixed(0).padStart(8)}  ${p.p50.toFixed(2).padStart(7)}  ${p.p99.toFixed(2).padStart(7)}   ${errs(k)}`);
    }
    console.log(`\nratio CR / ConfigMap creates/s = ${(cr / cm).toFixed(2)} (target >= 0.7)`);
  } finally {
    await agent.close();
    await stopServerAndDatabase(server, db);
  }
}

runBenchmark(main);
