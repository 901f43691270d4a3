import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Agent, request } from 'undici';
import { benchCredentials, progress, runLoad } from './bench-support.js';
import { cpuDuring, type CpuSplit } from './process-cpu.js';

/** A running etcd of the benchmark: its base URL (HTTPS, loopback), process and data folder. */
export interface EtcdPeer {
  base: string;
  process: ChildProcess;
  dir: string;
}

/** True when an `etcd` binary is on the PATH (Debian's `etcd-server` package installs one). */
export function etcdAvailable(): boolean {
  return spawnSync('etcd', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * Starts a single-member etcd serving clients over HTTPS on loopback with
 * the benchmark's serving certificate (the one Plinth serves), its data in
 * a fresh folder under .test-tmp. etcd fsyncs its WAL before it answers a
 * put, as Plinth commits synchronously: both sides are durable. Resolves
 * once /health answers.
 */
export async function startEtcd(clientPort: number, peerPort: number): Promise<EtcdPeer> {
  const { dir: pkiDir, pki } = await benchCredentials();
  const dir = path.join(pkiDir, `etcd-${clientPort}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'cert.pem'), pki.serving.certPem);
  writeFileSync(path.join(dir, 'key.pem'), pki.serving.keyPem, { mode: 0o600 });
  const base = `https://127.0.0.1:${clientPort}`;
  const args = [
    '--name', 'bench', '--data-dir', path.join(dir, 'data'),
    '--listen-client-urls', base, '--advertise-client-urls', base,
    '--listen-peer-urls', `http://127.0.0.1:${peerPort}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${peerPort}`,
    '--initial-cluster', `bench=http://127.0.0.1:${peerPort}`,
    '--cert-file', path.join(dir, 'cert.pem'), '--key-file', path.join(dir, 'key.pem'),
    '--log-level', 'error',
  ];
  // etcd logs its raft elections even at --log-level error: its output is left out of the benchmark's.
  const child = spawn('etcd', args, { stdio: 'ignore' });
  const agent = new Agent({ connect: { ca: pki.caPem } });
  try {
    for (const deadline = Date.now() + 20_000; ; ) {
      try {
        const res = await request(`${base}/health`, { dispatcher: agent });
        const text = await res.body.text();
        if (res.statusCode === 200 && text.includes('true')) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline || child.exitCode !== null) throw new Error('etcd did not become healthy');
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await agent.close();
  }
  return { base, process: child, dir };
}

/** Stops the etcd started by {@link startEtcd} and waits for it to exit. */
export async function stopEtcd(peer: EtcdPeer): Promise<void> {
  if (peer.process.exitCode !== null) return;
  const exited = new Promise((r) => peer.process.once('exit', r));
  peer.process.kill('SIGTERM');
  await exited;
}

/**
 * Durable puts through etcd 3.4's JSON gateway (POST /v3/kv/put, key and
 * value base64), `concurrency` keep-alive HTTPS clients for `ms`, each
 * value `valueBytes` long: the same load generator and client library as
 * the API creates. Returns the load's result and the CPU etcd (as
 * "server") and this process spent.
 */
export async function etcdPuts(peer: EtcdPeer, concurrency: number, ms: number, valueBytes: number): Promise<{ result: Awaited<ReturnType<typeof runLoad>>; cpu: CpuSplit }> {
  const { pki } = await benchCredentials();
  const agent = new Agent({ connections: concurrency, pipelining: 1, keepAliveTimeout: 30_000, connect: { ca: pki.caPem } });
  const value = Buffer.from('x'.repeat(valueBytes)).toString('base64');
  progress(`etcd: durable puts through the JSON gateway, ${concurrency} keep-alive HTTPS clients for ${ms / 1000}s`);
  try {
    return await cpuDuring({ serverPid: peer.process.pid!, postgresPid: peer.process.pid! }, () =>
      runLoad(concurrency, ms, async (i) => {
        const key = Buffer.from(`/registry/configmaps/bench/cm-${i}`).toString('base64');
        const res = await request(`${peer.base}/v3/kv/put`, { method: 'POST', body: JSON.stringify({ key, value }), headers: { 'content-type': 'application/json' }, dispatcher: agent });
        const text = await res.body.text();
        if (res.statusCode !== 200) throw new Error(`etcd put: ${res.statusCode} ${text.slice(0, 200)}`);
      }),
    );
  } finally {
    await agent.close();
  }
}
