import { probeDatabase } from '@plinth/storage';
import type { PlinthServices } from './plinth-services.js';

/** A plain-text health answer. */
export interface HealthAnswer {
  code: number;
  contentType: string;
  body: string;
}

const TEXT = 'text/plain; charset=utf-8';

/** /healthz and /livez: the process answers. */
export function liveness(): HealthAnswer {
  return { code: 200, contentType: TEXT, body: 'ok' };
}

/**
 * /readyz: ready unless this replica cannot serve correctly (PostgreSQL
 * unreachable or the watch pipeline broken). A degraded dependency (Redis
 * down while the PostgreSQL fallback serves watches) keeps it ready and
 * shows as a `[+]… ok (degraded: …)` line under `?verbose`, as
 * kube-apiserver lists its checks.
 */
export async function readiness(s: PlinthServices, verbose = false): Promise<HealthAnswer> {
  const lines: string[] = [];
  let ok = true;
  if (s.shutdown.shuttingDown) {
    ok = false;
    lines.push('[-]shutdown failed: reason withheld');
  }
  if (await probeDatabase(s.db)) lines.push('[+]database ok');
  else {
    ok = false;
    lines.push('[-]database failed: PostgreSQL is unreachable');
  }
  const watchProblems = await s.watch.readiness().catch((err: Error) => [err.message]);
  if (watchProblems.length > 0) {
    ok = false;
    lines.push(`[-]watch-pipeline failed: ${watchProblems.join('; ')}`);
  } else lines.push('[+]watch-pipeline ok');
  const degraded = s.watch.degradations();
  lines.push(degraded.length > 0 ? `[+]watch-fanout ok (degraded: ${degraded.join('; ')})` : '[+]watch-fanout ok');
  const body = ok ? (verbose ? `${lines.join('\n')}\nreadyz check passed` : 'ok') : `${lines.filter((l) => l.startsWith('[-]') || verbose).join('\n')}\nreadyz check failed`;
  return { code: ok ? 200 : 503, contentType: TEXT, body };
}

/** /metrics in the Prometheus text format. */
export async function metricsAnswer(s: PlinthServices): Promise<HealthAnswer> {
  return { code: 200, contentType: s.metrics.registry.contentType, body: await s.metrics.registry.metrics() };
}

/** The answer for one of the health paths (`verbose`: the `?verbose` query), or undefined for any other path. */
export async function healthAnswer(s: PlinthServices, path: string, verbose = false): Promise<HealthAnswer | undefined> {
  if (path === '/healthz' || path === '/livez') return liveness();
  if (path === '/readyz') return readiness(s, verbose);
  if (path === '/metrics') return metricsAnswer(s);
  return undefined;
}
