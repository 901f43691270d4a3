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

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
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

/** Secret creates then gets against one server, `CONCURRENCY` keep-alive clients. */
async function measure(name: string, port: number, serverPid: number, plugin?: KmsTestPlugin): Promise<Row> {
  const base = `https://127.0.0.1:${port}`;
  const agent = await benchAgent({ connections: CONCURRENCY, pipelining: 1, keepAliveTimeout: 30000 });
  const call = async (method: 'GET' | 'POST', p: string, body?: string) => {
    const res = await request(`${base}${p}`, { method, body, headers: { 'content-type': 'application/json' }, dispatcher: agent });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${method} ${p}: ${res.statusCode} ${text.slice(0, 200)}`);
  };
  await call('POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'bench' } }));
  // Warm-up (JIT, connections; for KMS v2 the tenant's first write wraps its seed).
  await runLoad(CONCURRENCY, 1000, async (i) => call('POST', '/api/v1/namespaces/bench/secrets', secret(`warm-${i}`)));
  const before = plugin?.snapshot();
  progress(`${name}: Secret creates, ${CONCURRENCY} clients for ${SECONDS}s`);
  const cpu0 = processTreeCpuMs(serverPid);
  const creates = await runLoad(CONCURRENCY, SECONDS * 1000, async (i) => call('POST', '/api/v1/namespaces/bench/secrets', secret(`s-${i}`)));
  const cpu1 = processTreeCpuMs(serverPid);
  const after = plugin?.snapshot();
  progress(`${name}: Secret gets for ${SECONDS}s`);
  const n = Math.max(1, creates.latencies.length);
  const gets = await runLoad(CONCURRENCY, SECONDS * 1000, async (i) => call('GET', `/api/v1/namespaces/bench/secrets/s-${i % n}`));
  const cpu2 = processTreeCpuMs(serverPid);
  await agent.close();
  const writes = creates.latencies.length;
  return {
    name,
    creates: creates.opsPerSec,
    createP99: percentiles(creates.latencies).p99,
    gets: gets.opsPerSec,
    getP99: percentiles(gets.latencies).p99,
    createCpuUs: ((cpu1 - cpu0) * 1000) / Math.max(1, creates.latencies.length),
    getCpuUs: ((cpu2 - cpu1) * 1000) / Math.max(1, gets.latencies.length),
    kmsPer1000: before && after ? { encrypt: ((after.Encrypt - before.Encrypt) * 1000) / writes, decrypt: ((after.Decrypt - before.Decrypt) * 1000) / writes } : undefined,
  };
}

async function stop(server: ChildProcess): Promise<void> {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
}

async function main(): Promise<void> {
  const pgPort = 57900 + (process.pid % 90);
  const apiPort = 18900 + (process.pid % 90);
  const db = await startBenchPostgres('encryption', pgPort);
  const dir = mkdtempSync(path.join(tmpdir(), 'plinth-bench-enc-'));
  const plugin = new KmsTestPlugin(path.join(dir, 'kms.sock'));
  await plugin.start();
  const variants: Array<{ name: string; config?: string }> = [
    { name: 'identity (no configuration)' },
    { name: 'aesgcm', config: providerConfig('aesgcm') },
    { name: 'secretbox', config: providerConfig('secretbox') },
    { name: 'KMS v2 (cached seed)', config: kmsConfig(plugin.endpoint) },
  ];
  const rows: Row[] = [];
  try {
    for (const [i, v] of variants.entries()) {
      const url = await createDatabase(db.url, `enc_${i}`);
      const env: Record<string, string> = { DATABASE_URL: url, PLINTH_DB_POOL_SIZE: '32' };
      if (v.config) {
        const file = path.join(dir, `enc-${i}.yaml`);
        writeFileSync(file, v.config);
        env.PLINTH_ENCRYPTION_PROVIDER_CONFIG = file;
      }
      const server = await startServerProcess(env, apiPort);
      try {
        rows.push(await measure(v.name, apiPort, server.pid!, v.name.startsWith('KMS') ? plugin : undefined));
      } finally {
        await stop(server);
      }
    }
  } finally {
    await plugin.stop();
    await db.stop();
  }
  const identity = rows[0];
  console.log(`\nSecrets, ${CONCURRENCY} keep-alive HTTPS clients, ${SECONDS}s each (one server process, embedded PostgreSQL, durable):`);
  console.log(`  ${'provider'.padEnd(28)} ${'creates/s'.padStart(10)} ${'vs identity'.padStart(12)} ${'p99 ms'.padStart(8)} ${'gets/s'.padStart(10)} ${'vs identity'.padStart(12)} ${'p99 ms'.padStart(8)}`);
  const rel = (a: number, b: number) => `${a >= b ? '+' : ''}${(((a - b) / b) * 100).toFixed(1)}%`;
  for (const r of rows) {
    console.log(
      `  ${r.name.padEnd(28)} ${r.creates.toFixed(0).padStart(10)} ${rel(r.creates, identity.creates).padStart(12)} ${r.createP99.toFixed(1).padStart(8)} ${r.gets.toFixed(0).padStart(10)} ${rel(r.gets, identity.gets).padStart(12)} ${r.getP99.toFixed(1).padStart(8)}`,
    );
  }
  console.log(`\nServer CPU per operation, µs (its process tree; PostgreSQL apart):`);
  for (const r of rows) {
    console.log(`  ${r.name.padEnd(28)} create ${r.createCpuUs.toFixed(0).padStart(6)} (${rel(r.createCpuUs, identity.createCpuUs)})   get ${r.getCpuUs.toFixed(0).padStart(6)} (${rel(r.getCpuUs, identity.getCpuUs)})`);
  }
  const kms = rows.find((r) => r.kmsPer1000);
  if (kms?.kmsPer1000) console.log(`  KMS calls per 1,000 writes (after the tenant's first): Encrypt ${kms.kmsPer1000.encrypt.toFixed(2)}, Decrypt ${kms.kmsPer1000.decrypt.toFixed(2)} (Status is polled apart, every 60 s)`);
  console.log('  goal: aesgcm and KMS v2 with cached keys within 10% of identity');
}

runBenchmark(main);
