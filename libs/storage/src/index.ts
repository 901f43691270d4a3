/**
 * @plinth/storage: PostgreSQL storage (Kysely): schema, migrations,
 * repositories, the change log and the watch pipeline. The only place, with
 * migrations/, that imports kysely or pg or writes SQL.
 */
export * from './db.js';
export * from './shard-router.js';
export * from './tenant-scope.js';
export * from './prepared-statements.js';
export * from './storage-error.js';
export * from './database-errors.js';
export * from './migrator.js';
export * from './object-key.js';
export * from './object-store.repository.js';
export * from './write-batcher.js';
export * from './object-list.repository.js';
export * from './change-log.repository.js';
export * from './tenant.repository.js';
export * from './tenant-move.repository.js';
export * from './quota.repository.js';
export * from './owner.repository.js';
export * from './event-expiry.repository.js';
export * from './advisory-lock-elector.js';
export * from './selector-sql.js';
export * from './embedded-postgres.js';
export * from './system-postgres.js';
export * from './server-version.js';
export * from './database-probe.js';
export * from './host-list-connector.js';
export * from './revision-fence.js';
export * from './standby-reads.js';
export { durableRevision } from './durable-revision.js';
export * from './watch/index.js';
export * from './value/value-transformer.js';
export * from './value/aes-transformers.js';
export * from './value/secretbox-transformer.js';
export * from './value/identity-transformer.js';
export * from './value/stored-body.js';
export * from './encryption-rotation.repository.js';
export * from './value/hkdf-gcm-transformer.js';
export * from './value/encrypted-object.js';
export * from './value/tenant-key-store.repository.js';
