import type { Logger } from 'pino';
import { DEFAULT_SHARD, StandbyReads, StandbyReplica } from '@plinth/storage';
import type { StorageConfig } from '../config/storage-config.js';
import { redactCredentials } from '../config/redact-credentials.js';
import type { ShardPool } from './shard-pool.js';
import type { TenantDirectory } from './tenant-directory.js';

/**
 * The read replicas of this replica's shards (PLINTH_READ_REPLICA_URL for
 * the platform's own database), or undefined when none is configured. Each
 * follows its shard's primary as the pool's probes find it: every round
 * that the primary answers confirms its timeline and revision and probes
 * the standby; a round it does not stops standby reads until it does again
 * (standby-reads.ts).
 */
export function createStandbyReads(config: Pick<StorageConfig, 'readReplica' | 'rowLevelSecurity' | 'dbPoolSize'>, pool: ShardPool, directory: TenantDirectory, logger: Logger): StandbyReads | undefined {
  const settings = config.readReplica;
  if (!settings) return undefined;
  const reads = new StandbyReads((tenant) => directory.peek(tenant) ?? directory.shardOf(tenant));
  const replica = new StandbyReplica({
    url: settings.url,
    rowSecurity: config.rowLevelSecurity,
    timeoutMs: settings.timeoutMs,
    maxLagMs: settings.maxLagMs,
    maxConnections: config.dbPoolSize,
    onPoolError: (err) => logger.debug({ err: redactCredentials(err.message) }, 'read replica connection error'),
  });
  void reads.set(DEFAULT_SHARD, replica);
  pool.listen({
    primaryProbed: (name, state) => {
      const r = reads.replica(name);
      if (!r) return;
      if (!state) return r.primaryLost();
      r.primaryConfirmed({ systemIdentifier: state.systemIdentifier, timeline: state.timeline, counter: state.counter });
      void r.probe();
    },
  });
  return reads;
}
