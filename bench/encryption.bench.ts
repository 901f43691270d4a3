import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { request } from 'undici';
import { kmsConfig, KmsTestPlugin } from '../test/encryption/kms-test-plugin.js';
import { processTreeCpuMs } from './process-cpu.js';
import { benchAgent, percentiles, progress, runBenchmark, runLoad, startBenchPostgres, startServerProcess } from './bench-support.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 12);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);

const providerConfig = (provider: string) => `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
      - ${provider}:
          keys:
            - name: key1
              secret: ${randomBytes(32).toString('base64')}
      - identity: {}
`;

const secret = (name: string) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name, labels: { bench: 'enc' } }, stringData: { password: `value-of-${name}`, token: randomBytes(24).toString('hex') } });

interface Row {
  name: string;
  creates: number;
  createP99: number;
  gets: number;
  getP99: number;
  /** Server CPU (its process tree) per operation, µs: steadier than throughput on a busy host. */
  createCpuUs: number;
  getCpuUs: number;
  /** The median over rounds of this provider's rate against identity's in the same round (drift cancels out). */
  createVsIdentity: number;
  getVsIdentity: number;
  /** Share of the get phase's encrypted reads the plaintext cache answered (undefined: no cache, or nothing encrypted). */
  getCacheHits?: number;
  kmsPer1000?: { encrypt: number; decrypt: number };
}

async function createDatabase(adminUrl: string, name: string): Promise<string> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  await c.query(`CREATE DATABASE "${name}"`).finally(() => c.end());
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/** What one server (one provider) accumulates over the interleaved slices. */
interface Tally {
  createLatencies: number[];
  getLatencies: number[];
  createMs: number;
  getMs: number;
  createCpuMs: number;
  getCpuMs: number;
  created: number;
  getsDone: number;
  /** Ops/s of each slice, round by round. */
  createRounds: number[];
  getRounds: number[];
}

/** One provider's server and the client that drives it. */
interface Variant {
  name: string;
  port: number;
  pid: number;
  plugin?: KmsTestPlugin;
  call: (method: 'GET' | 'POST', p: string, body?: string) => Promise<void>;
  /** The value of a sample in the server's /metrics (0 when absent). */
  metric: (name: string) => Promise<number>;
  close: () => Promise<void>;
  tally: Tally;
}

async function connect(name: string, port: number, pid: number, plugin?: KmsTestPlugin): Promise<Variant> {
  const base = `https://127.0.0.1:${port}`;
  const agent = await benchAgent({ connections: CONCURRENCY, pipelining: 1, keepAliveTimeout: 30000 });
  const call = async (method: 'GET' | 'POST', p: string, body?: string) => {
    const res = await request(`${base}${p}`, { method, body, headers: { 'content-type': 'application/json' }, dispatcher: agent });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${method} ${p}: ${res.statusCode} ${text.slice(0, 200)}`);
  };
  const metric = async (name: string) => {
    const res = await request(`${base}/metrics`, { dispatcher: agent });
    const text = await res.body.text();
    return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  };
  await call('POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'bench' } }));
  // Warm-up (JIT, connections; for KMS v2 the tenant's first write wraps its seed).
  await runLoad(CONCURRENCY, 1000, async (i) => call('POST', '/api/v1/namespaces/bench/secrets', secret(`warm-${i}`)));
  const tally: Tally = { createLatencies: [], getLatencies: [], createMs: 0, getMs: 0, createCpuMs: 0, getCpuMs: 0, created: 0, getsDone: 0, createRounds: [], getRounds: [] };
  return { name, port, pid, plugin, call, metric, close: () => agent.close(), tally };
}

/** One slice of creates (`phase` create) or gets against `v`, added to its tally. */
async function slice(v: Variant, phase: 'create' | 'get', ms: number): Promise<void> {
  const t = v.tally;
  const cpu0 = processTreeCpuMs(v.pid);
  const t0 = Date.now();
  if (phase === 'create') {
    const offset = t.created;
    const r = await runLoad(CONCURRENCY, ms, async (i) => v.call('POST', '/api/v1/namespaces/bench/secrets', secret(`s-${offset + i}`)));
    t.created += r.latencies.length + r.errors;
    t.createLatencies.push(...r.latencies);
    t.createMs += Date.now() - t0;
    t.createRounds.push(r.opsPerSec);
    t.createCpuMs += processTreeCpuMs(v.pid) - cpu0;
  } else {
    // Every object in turn (cold reads first, then re-reads), across slices; only objects known to exist.
    const n = Math.max(1, t.createLatencies.length);
    const offset = t.getsDone;
    const r = await runLoad(CONCURRENCY, ms, async (i) => v.call('GET', `/api/v1/namespaces/bench/secrets/s-${(offset + i) % n}`));
    t.getsDone += r.latencies.length + r.errors;
    t.getLatencies.push(...r.latencies);
    t.getMs += Date.now() - t0;
    t.getRounds.push(r.opsPerSec);
    t.getCpuMs += processTreeCpuMs(v.pid) - cpu0;
  }
}

/** The median of a[i] / b[i]: rounds measured side by side, so a busy second weighs on both. */
function medianRatio(a: number[], b: number[]): number {
  const r = a.map((x, i) => x / b[i]).sort((x, y) => x - y);
  return r.length % 2 ? r[(r.length - 1) / 2] : (r[r.length / 2 - 1] + r[r.length / 2]) / 2;
}

/**
 * Creates, then gets, against every provider's server in turn, one-second
 * slices round after round, so that a machine whose load drifts (other
 * processes, CPU frequency) weighs on every provider alike.
 */
async function measureInterleaved(variants: Variant[]): Promise<Row[]> {
  const snapshots = new Map(variants.map((v) => [v, v.plugin?.snapshot()]));
  for (let round = 0; round < SECONDS; round++) {
    progress(`creates, round ${round + 1}/${SECONDS} (${variants.length} providers in turn, ${CONCURRENCY} clients, 1 s each)`);
    for (const v of variants) await slice(v, 'create', 1000);
  }
  const after = new Map(variants.map((v) => [v, v.plugin?.snapshot()]));
  const hits0 = await Promise.all(variants.map(async (v) => [await v.metric('plinth_encryption_read_cache_hits_total'), await v.metric('plinth_encryption_read_cache_misses_total')]));
  for (let round = 0; round < SECONDS; round++) {
    progress(`gets, round ${round + 1}/${SECONDS}`);
    for (const v of variants) await slice(v, 'get', 1000);
  }
  const hits1 = await Promise.all(variants.map(async (v) => [await v.metric('plinth_encryption_read_cache_hits_total'), await v.metric('plinth_encryption_read_cache_misses_total')]));
  return variants.map((v, i) => {
    const t = v.tally;
    const hits = hits1[i][0] - hits0[i][0];
    const misses = hits1[i][1] - hits0[i][1];
    const before = snapshots.get(v);
    const end = after.get(v);
    const writes = Math.max(1, t.createLatencies.length);
    const gets = Math.max(1, t.getLatencies.length);
    return {
      name: v.name,
      creates: (t.createLatencies.length * 1000) / t.createMs,
      createP99: percentiles(t.createLatencies).p99,
      gets: (t.getLatencies.length * 1000) / t.getMs,
      getP99: percentiles(t.getLatencies).p99,
      createCpuUs: (t.createCpuMs * 1000) / writes,
      getCpuUs: (t.getCpuMs * 1000) / gets,
      createVsIdentity: medianRatio(t.createRounds, variants[0].tally.createRounds),
      getVsIdentity: medianRatio(t.getRounds, variants[0].tally.getRounds),
      getCacheHits: hits + misses > 0 ? hits / (hits + misses) : undefined,
      kmsPer1000: before && end ? { encrypt: ((end.Encrypt - before.Encrypt) * 1000) / writes, decrypt: ((end.Decrypt - before.Decrypt) * 1000) / writes } : undefined,
    };
  });
}

async function stop(server: ChildProcess): Promise<void> {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
}

async function main(): Promise<void> {
  const pgPort = 57900 + (process.pid % 90);
  const apiPort = 18900 + 5 * (process.pid % 20);
  const db = await startBenchPostgres('encryption', pgPort);
  const dir = mkdtempSync(path.join(tmpdir(), 'plinth-bench-enc-'));
  const plugin = new KmsTestPlugin(path.join(dir, 'kms.sock'));
  await plugin.start();
  const variants: Array<{ name: string; config?: string; env?: Record<string, string> }> = [
    { name: 'identity (no configuration)' },
    { name: 'aesgcm', config: providerConfig('aesgcm') },
    { name: 'aesgcm, read cache off', config: providerConfig('aesgcm'), env: { PLINTH_ENCRYPTION_READ_CACHE_MB: '0' } },
    { name: 'secretbox', config: providerConfig('secretbox') },
    { name: 'KMS v2 (cached seed)', config: kmsConfig(plugin.endpoint) },
  ];
  const servers: ChildProcess[] = [];
  const connected: Variant[] = [];
  let rows: Row[] = [];
  try {
    for (const [i, v] of variants.entries()) {
      const url = await createDatabase(db.url, `enc_${i}`);
      // One worker each: the comparison is of providers, not of how connections spread over workers.
      const env: Record<string, string> = { DATABASE_URL: url, PLINTH_DB_POOL_SIZE: '32', PLINTH_WORKERS: '1', ...v.env };
      if (v.config) {
        const file = path.join(dir, `enc-${i}.yaml`);
        writeFileSync(file, v.config);
        env.PLINTH_ENCRYPTION_PROVIDER_CONFIG = file;
      }
      const server = await startServerProcess(env, apiPort + i);
      servers.push(server);
      progress(`${v.name}: server up, warming up`);
      connected.push(await connect(v.name, apiPort + i, server.pid!, v.name.startsWith('KMS') ? plugin : undefined));
    }
    rows = await measureInterleaved(connected);
  } finally {
    for (const c of connected) await c.close();
    for (const server of servers) await stop(server);
    await plugin.stop();
    await db.stop();
  }
  const identity = rows[0];
  console.log(`\nSecrets, ${CONCURRENCY} keep-alive HTTPS clients, ${SECONDS} one-second slices per provider and phase, the providers in turn (a server process each, one embedded PostgreSQL, durable):`);
  console.log(`  ${'provider'.padEnd(34)} ${'creates/s'.padStart(10)} ${'vs identity'.padStart(12)} ${'median/round'.padStart(13)} ${'p99 ms'.padStart(8)} ${'gets/s'.padStart(10)} ${'vs identity'.padStart(12)} ${'median/round'.padStart(13)} ${'p99 ms'.padStart(8)}`);
  const rel = (a: number, b: number) => `${a >= b ? '+' : ''}${(((a - b) / b) * 100).toFixed(1)}%`;
  for (const r of rows) {
    console.log(
      `  ${r.name.padEnd(34)} ${r.creates.toFixed(0).padStart(10)} ${rel(r.creates, identity.creates).padStart(12)} ${rel(r.createVsIdentity, 1).padStart(13)} ${r.createP99.toFixed(1).padStart(8)} ${r.gets.toFixed(0).padStart(10)} ${rel(r.gets, identity.gets).padStart(12)} ${rel(r.getVsIdentity, 1).padStart(13)} ${r.getP99.toFixed(1).padStart(8)}`,
    );
  }
  console.log(`\nServer CPU per operation, µs (its process tree; PostgreSQL apart):`);
  for (const r of rows) {
    console.log(`  ${r.name.padEnd(34)} create ${r.createCpuUs.toFixed(0).padStart(6)} (${rel(r.createCpuUs, identity.createCpuUs)})   get ${r.getCpuUs.toFixed(0).padStart(6)} (${rel(r.getCpuUs, identity.getCpuUs)})`);
  }
  console.log(`  gets read every object in turn; plaintext cache hits during the gets (PLINTH_ENCRYPTION_READ_CACHE_MB, default 64): ${rows.map((r) => `${r.name} ${r.getCacheHits === undefined ? '—' : `${(r.getCacheHits * 100).toFixed(0)}%`}`).join(', ')}`);
  const kms = rows.find((r) => r.kmsPer1000);
  if (kms?.kmsPer1000) console.log(`  KMS calls per 1,000 writes (after the tenant's first): Encrypt ${kms.kmsPer1000.encrypt.toFixed(2)}, Decrypt ${kms.kmsPer1000.decrypt.toFixed(2)} (Status is polled apart, every 60 s)`);
  console.log('  goal: aesgcm and KMS v2 with cached keys within 10% of identity');
}

runBenchmark(main);
