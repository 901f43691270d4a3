import type { Logger } from 'pino';
import { DEFAULT_SHARD, StandbyReads, StandbyReplica } from '@plinth/storage';
import type { StorageConfig } from '../config/storage-config.js';
import { redactCredentials } from '../config/redact-credentials.js';
import type { ShardPool } from './shard-pool.js';
import type { TenantDirectory } from './tenant-directory.js';

/**
 * The read replicas of this replica's shards: PLINTH_READ_REPLICA_URL for
 * the platform's own database, a Shard's Secret key `readReplicaKey` for
 * the others (added, replaced and closed as the pool is told). Each
 * follows its shard's primary as the pool's probes find it: every round
 * that the primary answers confirms its timeline and revision and probes
 * the standby; a round it does not stops standby reads until it does again
 * (standby-reads.ts).
 */
export function createStandbyReads(config: Pick<StorageConfig, 'readReplica' | 'rowLevelSecurity' | 'dbPoolSize'>, pool: ShardPool, directory: TenantDirectory, logger: Logger): StandbyReads {
  const settings = { timeoutMs: config.readReplica?.timeoutMs ?? 1000, maxLagMs: config.readReplica?.maxLagMs ?? 5000 };
  const reads = new StandbyReads((tenant) => directory.peek(tenant) ?? directory.shardOf(tenant));
  const replicaOn = (shard: string, url: string, maxConnections: number) =>
    new StandbyReplica({
      url,
      rowSecurity: config.rowLevelSecurity,
      ...settings,
      maxConnections,
      onPoolError: (err) => logger.debug({ shard, err: redactCredentials(err.message) }, 'read replica connection error'),
    });
  if (config.readReplica) void reads.set(DEFAULT_SHARD, replicaOn(DEFAULT_SHARD, config.readReplica.url, config.dbPoolSize));
  pool.listen({
    readReplica: async (name, url) => {
      if (url === undefined) return reads.remove(name);
      logger.info({ shard: name }, 'read replica configured');
      await reads.set(name, replicaOn(name, url, Math.max(2, Math.floor(config.dbPoolSize / 2))));
    },
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
