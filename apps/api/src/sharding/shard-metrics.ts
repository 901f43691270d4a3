import { Counter, Gauge, type Registry } from 'prom-client';
import type { ShardPool } from './shard-pool.js';

/**
 * Per-shard metrics, read from the pool when scraped:
 * `plinth_shard_ready{shard}` (1 while it answers), and
 * `plinth_shard_unavailable_total{shard}` (requests refused with 503
 * because their tenant's shard was down or not connected).
 */
export function registerShardMetrics(registry: Registry, pool: ShardPool): void {
  new Gauge({
    name: 'plinth_shard_ready',
    help: 'Whether each shard is connected, migrated and answering its probe (1) or not (0), as this replica sees it.',
    labelNames: ['shard'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const s of pool.states()) this.set({ shard: s.name }, s.ready ? 1 : 0);
    },
  });
  const refused = new Counter({
    name: 'plinth_shard_unavailable_total',
    help: 'Statements refused at once because their tenant\'s shard was down or not connected (answered 503 with Retry-After).',
    labelNames: ['shard'] as const,
    registers: [registry],
  });
  pool.onRefused((shard) => refused.inc({ shard }));
}
