import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { type DB, ObjectStoreRepository, TenantRepository } from '@plinth/storage';
import { down, up } from '../../migrations/0020-batched-accounting.migration.js';
import { useStorageDatabase } from '../support/storage-database.js';

/** The tenant's objects and their bytes as migration 0020 measures them (the value as written). */
async function recount(db: Kysely<DB>, tenant: string): Promise<{ objects: number; bytes: number }> {
  const { rows } = await sql<{ objects: number; bytes: number }>`
    SELECT count(*)::int AS objects, coalesce(sum(plinth_body_size(body)), 0)::int AS bytes FROM objects WHERE tenant = ${tenant}`.execute(db);
  return rows[0];
}

/** The tenant's usage row for all objects. */
async function usage(tenants: TenantRepository, tenant: string): Promise<{ objects: number; bytes: number }> {
  const all = (await tenants.usage(tenant)).find((u) => u.usageKey === '');
  return { objects: all?.objects ?? 0, bytes: all?.bytes ?? 0 };
}

describe('migration 0020: bytes counted as written, recounted once', () => {
  const storage = useStorageDatabase('accounting_0020');

  it('recounts the bytes that updates and deletes of small values let creep up before it, and they creep no more', async () => {
    const db = storage.db;
    const tenants = new TenantRepository(db);
    const objects = new ObjectStoreRepository(db);
    const key = (name: string) => ({ tenant: 'drift', resource: 'configmaps', namespace: 'd', name });
    // PostgreSQL stores a value under 127 bytes with a 1-byte header, 3 bytes less than the value as written;
    // 6 KB of one letter it compresses.
    // Writes of several objects at once, so that they also go in batches.
    const churn = (round: string) =>
      Promise.all(
        Array.from({ length: 8 }, async (_, i) => {
          const name = `${round}-${i}`;
          const made = await objects.create(key(name), { metadata: { name }, data: { v: i < 4 ? 'x' : 'x'.repeat(6000) } });
          const grown = await objects.update(key(name), { metadata: { name }, data: { v: i < 4 ? 'xy' : 'y'.repeat(7000) } }, made.revision);
          if (i % 2 === 0) await objects.delete(key(name), grown.revision);
        }),
      );

    await down(db as unknown as Kysely<unknown>);
    await tenants.ensure('drift');
    await churn('before');
    const drifted = await usage(tenants, 'drift');
    await up(db as unknown as Kysely<unknown>);
    const counted = await recount(db, 'drift');
    assert.equal(drifted.objects, counted.objects);
    assert.notEqual(drifted.bytes, counted.bytes, 'the old functions let the bytes drift (else this test proves nothing)');
    assert.deepEqual(await usage(tenants, 'drift'), counted, 'recounted by the migration');

    await churn('after');
    assert.deepEqual(await usage(tenants, 'drift'), await recount(db, 'drift'), 'writes after it keep the count exact');
  });
});
