import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { OtlpReceiver } from '../test/support/otlp-receiver.js';
import { benchAgent, benchDataDir, percentiles, progress, runLoad, startBenchPostgres, startServerProcess } from './bench-support.js';
import { cpuDuring, postmasterPid } from './process-cpu.js';

const CONCURRENCY = 32;

/** One tracing setting's figures: creates per second, latency percentiles, server CPU per create. */
interface TracingRun {
  label: string;
  opsPerSec: number;
  p50: number;
  p99: number;
  serverMsPerCreate: number;
  spans: number;
}

/**
 * What tracing costs a create (BENCH_WRITE_TRACING=1 of bench:write): the
 * same CONCURRENCY keep-alive clients creating ConfigMaps for `seconds`
 * against one server process per setting, over one durable PostgreSQL:
 * no PLINTH_TRACING_CONFIG_FILE, a file with samplingRatePerMillion 0 (the
 * hooks installed, nothing sampled), and 1,000,000 (every request traced and
 * exported over OTLP gRPC to a local receiver, test/support/otlp-receiver.ts).
 * Prints one line per setting.
 */
export async function tracingCost(seconds: number, body: (name: string) => string): Promise<void> {
  const pgPort = 57100 + (process.pid % 400);
  const apiPort = 18100 + (process.pid % 400);
  const db = await startBenchPostgres('tracing', pgPort);
  const receiver = await OtlpReceiver.start();
  const dir = mkdtempSync(path.join(tmpdir(), 'plinth-bench-tracing-'));
  const file = (rate: number) => {
    const f = path.join(dir, `tracing-${rate}.yaml`);
    writeFileSync(f, `apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: ${receiver.endpoint}\nsamplingRatePerMillion: ${rate}\n`);
    return f;
  };
  const settings: [string, Record<string, string>][] = [
    ['tracing off (no file)', {}],
    ['samplingRatePerMillion 0', { PLINTH_TRACING_CONFIG_FILE: file(0) }],
    ['samplingRatePerMillion 1000000', { PLINTH_TRACING_CONFIG_FILE: file(1_000_000) }],
  ];
  const runs: TracingRun[] = [];
  try {
    for (const [n, [label, env]] of settings.entries()) {
      const server = await startServerProcess({ DATABASE_URL: db.url, PLINTH_DB_POOL_SIZE: '32', ...env }, apiPort);
      try {
        const agent = await benchAgent({ connections: CONCURRENCY, pipelining: 1, keepAliveTimeout: 30000 });
        const post = async (p: string, b: string) => {
          const res = await request(`https://127.0.0.1:${apiPort}${p}`, { method: 'POST', body: b, headers: { 'content-type': 'application/json' }, dispatcher: agent });
          const text = await res.body.text();
          if (res.statusCode >= 300) throw new Error(`POST ${p}: ${res.statusCode} ${text.slice(0, 200)}`);
        };
        const ns = `trace-${n}`;
        await post('/api/v1/namespaces', JSON.stringify({ metadata: { name: ns } }));
        const create = (i: number, prefix: string) => post(`/api/v1/namespaces/${ns}/configmaps`, body(`${prefix}-${i}`).replace('"namespace":"bench"', `"namespace":"${ns}"`));
        await runLoad(CONCURRENCY, 1000, (i) => create(i, 'warm'));
        progress(`HTTP creates, ${label}: ${CONCURRENCY} keep-alive clients for ${seconds}s`);
        const spansBefore = receiver.spans.length;
        const pids = { serverPid: server.pid!, postgresPid: postmasterPid(benchDataDir(db)) };
        const { result, cpu } = await cpuDuring(pids, () => runLoad(CONCURRENCY, seconds * 1000, (i) => create(i, 'cm')));
        const p = percentiles(result.latencies);
        runs.push({ label, opsPerSec: result.opsPerSec, p50: p.p50, p99: p.p99, serverMsPerCreate: cpu.server / result.latencies.length, spans: 0 });
        await agent.close();
        // Stopping the server exports what its batches still hold.
        server.kill('SIGTERM');
        await new Promise((r) => server.once('exit', r));
        runs[runs.length - 1].spans = receiver.spans.length - spansBefore;
      } finally {
        if (server.exitCode === null) server.kill('SIGKILL');
      }
    }
  } finally {
    await receiver.close();
    await db.stop();
  }
  console.log(`\nTracing cost of creates (${CONCURRENCY} clients, ${seconds} s each, 1 KiB ConfigMaps, durable PostgreSQL; spans to a local OTLP gRPC receiver)`);
  for (const r of runs) {
    console.log(
      `  ${r.label.padEnd(32)} ${r.opsPerSec.toFixed(0).padStart(6)} creates/s  p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms  server CPU ${r.serverMsPerCreate.toFixed(3)} ms/create  spans exported ${r.spans}`,
    );
  }
}
