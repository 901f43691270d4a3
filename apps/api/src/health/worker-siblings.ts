import cluster from 'node:cluster';

/**
 * Whether every worker process of this host serves (PLINTH_WORKERS > 1):
 * a worker answers /readyz with 503 until its primary says so. The primary
 * holds the shared port and hands each new connection to a worker that
 * listens; a keep-alive client (an informer, a load balancer's pool) that
 * connected while only the first worker listened would stay on it for good,
 * so readiness waits for all of them. A worker restarted later is told as
 * soon as it serves; the others stay ready meanwhile. Outside a worker
 * (one process) there is no such check.
 */
export class WorkerSiblings {
  private allServing = false;

  /** `inWorker`: this process is one of several workers (readiness then waits for the primary's word). */
  constructor(private readonly inWorker: boolean) {}

  /** The primary said every worker serves. Idempotent. */
  markAllServing(): void {
    this.allServing = true;
  }

  /** The /readyz line of this check, or undefined outside a worker (no such check there). */
  readyzLine(): { ok: boolean; line: string } | undefined {
    if (!this.inWorker) return undefined;
    return this.allServing ? { ok: true, line: '[+]workers ok' } : { ok: false, line: '[-]workers failed: not every worker process of this host serves yet' };
  }
}

/** This process's sibling state (a node:cluster worker when PLINTH_WORKERS > 1). */
export const workerSiblings = new WorkerSiblings(cluster.isWorker);
