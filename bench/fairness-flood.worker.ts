// Tenant A's flood of bench:fairness, on its own thread: its own event loop
// and its own undici agent, as a separate client would have. Run on the
// benchmark's main thread, 64 TLS clients' work delayed tenant B's clients
// on the same loop, and that client-side delay was counted as B's latency
// at the server.
import { parentPort, workerData } from 'node:worker_threads';
import { Agent, request } from 'undici';

/** What the benchmark hands the thread (or the in-process flood, BENCH_FLOOD_IN_PROCESS=1). */
export interface FloodOptions {
  base: string;
  /** The CA the server's certificate is issued by (the clients present no certificate: a bearer token each). */
  ca: string;
  token: string;
  clients: number;
  /** Until when (ms since the epoch) the clients send. */
  until: number;
  /** Ignore Retry-After and retry at once (BENCH_HOSTILE=1). */
  hostile: boolean;
  /** Prefix of the names of the ConfigMaps it creates (one per phase, so that no create collides with an earlier one). */
  tag: string;
  /** Labels on each ConfigMap it creates (BENCH_FLOOD_LABELS; 0: none, plain creates). */
  labels?: number;
}

/** `n` distinct labels, as a label-heavy client would send them. */
export function manyLabels(n: number): Record<string, string> {
  const labels: Record<string, string> = {};
  for (let i = 0; i < n; i++) labels[`label-${i}`] = `v${i % 100}`;
  return labels;
}

/** What the flood got: answers served, refused with 429, anything else (errors included). */
export interface FloodCounts {
  ok: number;
  refused: number;
  other: number;
}

/** One call as tenant A; resolves with the status, 0 when the request failed. */
async function callA(o: FloodOptions, agent: Agent, method: 'GET' | 'POST', path: string, body?: unknown): Promise<number> {
  try {
    const res = await request(`${o.base}${path}`, { method, dispatcher: agent, body: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': 'application/json', authorization: `Bearer ${o.token}` } });
    await res.body.text();
    return res.statusCode;
  } catch {
    return 0;
  }
}

/**
 * Tenant A's flood: `clients` loops alternating plain creates and gets of
 * its seed ConfigMap until `until`, on a keep-alive agent of its own;
 * counts the answers served, refused with 429 (then waits Retry-After, 1 s,
 * as client-go and kubectl do, unless hostile) and anything else.
 */
export async function flood(o: FloodOptions): Promise<FloodCounts> {
  const agent = new Agent({ connections: o.clients, pipelining: 1, keepAliveTimeout: 30000, connect: { ca: o.ca } });
  const counts: FloodCounts = { ok: 0, refused: 0, other: 0 };
  const labels = o.labels ? manyLabels(o.labels) : undefined;
  try {
    await Promise.all(
      Array.from({ length: o.clients }, async (_, c) => {
        for (let i = 0; Date.now() < o.until; i++) {
          const create = i % 2 === 0;
          const s = await callA(o, agent, create ? 'POST' : 'GET', `/clusters/a/api/v1/namespaces/default/configmaps${create ? '' : '/seed'}`, create ? { metadata: { name: `${o.tag}-${c}-${i}`, labels } } : undefined);
          if (s === 429) {
            counts.refused++;
            if (!o.hostile) await new Promise((r) => setTimeout(r, 1000));
          } else if (s < 300 && s > 0) counts.ok++;
          else counts.other++;
        }
      }),
    );
  } finally {
    await agent.close();
  }
  return counts;
}

if (parentPort && workerData) parentPort.postMessage(await flood(workerData as FloodOptions));
