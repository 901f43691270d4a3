// The noisy tenant of bench:hardening, on its own thread: its clients build
// 40 KB bodies and read 80 KB answers, work that would otherwise stall the
// quiet tenant's clients on the benchmark's event loop and be counted as
// the server's latency (a real quiet tenant's clients run elsewhere).
import https from 'node:https';
import { parentPort, workerData } from 'node:worker_threads';
import { runLoad } from './bench-support.js';

/** What the benchmark hands the thread. */
export interface NoiseOptions {
  base: string;
  tls: { ca: string; cert: string; key: string };
  ms: number;
  concurrency: number;
  /** Connections at most (64 by default). */
  maxSockets?: number;
}

/** One request as the noisy tenant's owner; resolves with the status. */
function call(agent: https.Agent, url: string, body: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = https.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(data);
  });
}

/** The noisy tenant's worst, in turn: a catastrophic schema pattern, the same through CEL, a rule at the runtime cost limit. */
export function noisyWorker(agent: https.Agent, base: string, codes: Record<number, number> = {}): (i: number) => Promise<void> {
  const n = `${base}/clusters/noisy/apis/noisy.example.com/v1/namespaces/n`;
  const hostile = `${'é'.repeat(20_000)}1`;
  const list = Array.from({ length: 1000 }, (_, i) => i + 1);
  return async (i) => {
    const kind = i % 3;
    let code: number;
    if (kind === 0) code = await call(agent, `${n}/patterns`, { metadata: { generateName: 'p-' }, spec: { v: hostile } });
    else if (kind === 1) code = await call(agent, `${n}/celpatterns`, { metadata: { generateName: 'c-' }, spec: { v: hostile } });
    else code = await call(agent, `${n}/costlies`, { metadata: { generateName: 'k-' }, spec: { l: list } });
    codes[code] = (codes[code] ?? 0) + 1;
  };
}

if (parentPort && workerData) {
  const o = workerData as NoiseOptions;
  const agent = new https.Agent({ keepAlive: true, maxSockets: o.maxSockets ?? 64, ...o.tls });
  const codes: Record<number, number> = {};
  const result = await runLoad(o.concurrency, o.ms, noisyWorker(agent, o.base, codes));
  agent.destroy();
  parentPort.postMessage({ opsPerSec: result.opsPerSec, errors: result.errors, codes });
}
