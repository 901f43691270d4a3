import { Gauge, type Registry } from 'prom-client';

/**
 * Registers `plinth_worker_info{worker, pid} 1` in `registry` (mutates it):
 * which worker process of PLINTH_WORKERS answered a scrape, since every
 * worker serves /metrics on the shared port with its own figures.
 */
export function registerWorkerInfo(registry: Registry, worker: number, pid: number): void {
  const gauge = new Gauge({
    name: 'plinth_worker_info',
    help: 'The worker process (of PLINTH_WORKERS on this host) whose figures these are: its cluster worker id and pid.',
    labelNames: ['worker', 'pid'] as const,
    registers: [registry],
  });
  gauge.set({ worker: String(worker), pid: String(pid) }, 1);
}
