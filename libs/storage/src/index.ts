/**
 * @plinth/storage: PostgreSQL storage (Kysely). Its public face is the
 * Storage interface (storage.interface.ts) and the factory of its
 * PostgreSQL implementation; the rest is named here one by one, for what
 * the application needs beyond object CRUD, lists and watches. The only
 * place, with migrations/, that imports kysely or pg or writes SQL.
 */

// The object storage: the interface, its token, the PostgreSQL implementation and what they take and give.
export {
  type GetOptions,
  type GuaranteedUpdateOptions,
  STORAGE,
  type Storage,
  type StorageWatcher,
  type TryUpdate,
  type WatchScope,
  type WatchSink,
} from './storage.interface.js';
export { createPostgresStorage, PostgresStorage, type PostgresStorageOptions } from './postgres-storage.js';
export { type StorageSpan, type StorageTracer } from './storage-tracer.js';
export { type ObjectKey, objectKeyId, type StoredObject, withResourceVersion } from './object-key.js';
export { type ChunkSizing, type ListChunk, type ListCursor, type ListQuery, type ListResult, ObjectListRepository } from './object-list.repository.js';
export { type ChangeEvent, ChangeLogRepository, openChange } from './change-log.repository.js';
export { type KeyFieldRequirement, type LabelRequirementLike } from './selector-sql.js';
export { isStorageError, type LimitExceeded, StorageError } from './storage-error.js';
export { REMAINING_COUNT_CAP } from './list-sql.js';

// What is special to PostgreSQL: the object repository's own sweeps, tenants, quotas, owners, moves, snapshots, Events' expiry.
export { ObjectStoreRepository, tenantTerminatingMessage } from './object-store.repository.js';
export { type WriteBatcherOptions } from './write-batcher.js';
export { type TenantLimit, type TenantRecord, TenantRepository, type TenantUsage } from './tenant.repository.js';
export { type QuotaItem, QuotaRepository, type QuotaUsed } from './quota.repository.js';
export { OwnerRepository } from './owner.repository.js';
export { isStaleMove, StaleMoveError, TenantMoveRepository } from './tenant-move.repository.js';
export { type CurrentKey, type RestoreBatch, TenantSnapshotRepository } from './tenant-snapshot.repository.js';
export { EventExpiryRepository, type ExpiredEvent } from './event-expiry.repository.js';

// Databases and shards: connecting, migrating (with migrations/'s migrations), probing, routing, fencing, leader election.
export { createDatabase, type Database, type DB, dropConnections, setPoolSize } from './db.js';
export { migrateToLatest, type SchemaMigrations } from './migrator.js';
export { MIN_POSTGRES_MAJOR, UnsupportedPostgresError } from './server-version.js';
export { type EmbeddedDatabase, embeddedPostgresUrl, startEmbeddedPostgres } from './embedded-postgres.js';
export { connectSession, hostListConnector, parseHostList, usesHostList } from './host-list-connector.js';
export { parseRedisUrl, type RedisTarget, SENTINEL_PORT, type SentinelHost } from './redis-url.js';
export { probeDatabase } from './database-probe.js';
export { ServerProbe } from './server-probe.js';
export { CONFIRM_MS, type PrimaryState, type ReadNeed, StandbyBehind, StandbyReads, StandbyReplica, type StandbyReplicaOptions, type StandbyState } from './standby-reads.js';
export { abandonSession, installStatementDeadline, serverAnswers, type StatementDeadlineOptions } from './statement-deadline.js';
export { checkSessionPooling, SESSION_STATE_USES, SessionPoolingError } from './session-pooling-check.js';
export { isDatabaseError, isDatabaseUnavailable } from './database-errors.js';
export { DEFAULT_SHARD, type ShardHandle, type ShardRouter, singleShard, tenantDb } from './shard-router.js';
export { REQUEST_ROLE, rowSecurityOf, tenantScoped } from './tenant-scope.js';
export { MAX_PREPARED, preparedSql } from './prepared-statements.js';
export { type FenceState, RedisRevisionLeaseStore, RevisionFence, type RevisionLeaseStore, survivesPrimaryLoss } from './revision-fence.js';
export { durableRevision } from './durable-revision.js';
export { AdvisoryLockElector, DEFAULT_ELECTION_TIMING, type ElectionTiming } from './advisory-lock-elector.js';

// The watch pipeline of a replica (relay, watch cache, Redis fan-out) and the caches of other concerns that follow it.
export { WatchPipeline, type WatchPipelineOptions } from './watch/watch-pipeline.js';
export { ALL_RESOURCES, type CachedChange, type CacheSubscriber, type ChangeObserver, type ChangeSource, WatchCache } from './watch/watch-cache.js';
export { TenantSnapshots } from './watch/tenant-snapshots.js';
export { type FanOutTiming } from './watch/fan-out-clock.js';
export { createRedisClient, redisKeyPrefix, redisOptionsFromUrl, waitForReplica } from './watch/redis-connection.js';

// Encryption at rest: value transformers, the resources they apply to, tenants' data keys, rotation.
export {
  DataKeyNeeded,
  type PrefixTransformer,
  PrefixTransformers,
  type ReadValue,
  type TransformContext,
  type ValueTransformer,
} from './value/value-transformer.js';
export { AesCbcTransformer, AesGcmTransformer } from './value/aes-transformers.js';
export { SecretboxTransformer } from './value/secretbox-transformer.js';
export { HKDF_SEED_SIZE, HkdfGcmTransformer } from './value/hkdf-gcm-transformer.js';
export { IDENTITY } from './value/identity-transformer.js';
export {
  configurePlaintextCache,
  forgetTenantPlaintexts,
  installResourceTransformers,
  plaintextCacheStats,
  type ResourceTransformer,
  type ResourceTransformers,
  type TransformationEvent,
} from './value/stored-body.js';
export { CorruptObjectError, corruptObjectReporting, MAX_REPORTED_CORRUPT_OBJECTS, setCorruptObjectReporting, UnreadableObjectsError } from './value/corrupt-object.js';
export { decodeEncryptedObject, DEK_SOURCE_HKDF_SHA256_XNONCE_AES_GCM_SEED, encodeEncryptedObject } from './value/encrypted-object.js';
export { defaultKeyStoreUrl, type TenantDataKey, TenantKeyStore } from './value/tenant-key-store.repository.js';
export { EncryptionRotationRepository, type RotationBatch, type RotationState } from './encryption-rotation.repository.js';
