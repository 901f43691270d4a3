import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { type DB, MAX_PREPARED, ObjectStoreRepository, preparedSql, tenantScoped } from '@plinth/storage';
import { useStorageDatabase } from '../support/storage-database.js';

/** The prepared statements of the one pooled connection behind `db`. */
async function preparedOn(db: Kysely<DB>): Promise<string[]> {
  const { rows } = await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements ORDER BY prepare_time`.execute(db);
  return rows.map((r) => r.statement);
}

describe('prepared statements of the storage layer', () => {
  // One connection, so every statement below runs on the connection whose statements are listed.
  const storage = useStorageDatabase('prepared', 1);

  it('prepares a get once per connection and runs it again by name, under row-level security too', async () => {
    const db = storage.db;
    const objects = new ObjectStoreRepository(db);
    const key = { tenant: 'default', resource: 'configmaps', namespace: 'p', name: 'one' };
    await objects.create(key, { metadata: { name: 'one' }, data: { v: '1' } });
    for (let i = 0; i < 8; i++) assert.deepEqual((await objects.get(key))?.body.data, { v: '1' });
    const gets = (await preparedOn(tenantScoped(db, 'default'))).filter((s) => s.includes('LEFT JOIN objects o'));
    assert.equal(gets.length, 1, 'one prepared get, reused by every get');
    // Another tenant's handle on the same connection: the same statement, planned for its role, sees only its rows.
    assert.equal(await objects.get({ ...key, tenant: 'other' }), undefined);
    assert.deepEqual((await objects.get(key))?.body.data, { v: '1' });
  });

  it(`prepares at most ${MAX_PREPARED} distinct texts; later ones run unnamed and still work`, async () => {
    const db = storage.db;
    const before = (await preparedOn(db)).length;
    for (let i = 0; i < MAX_PREPARED + 10; i++) {
      const { rows } = await preparedSql<{ n: number }>`SELECT ${sql.raw(String(i))}::int + ${1}::int AS n`.execute(db);
      assert.equal(rows[0].n, i + 1);
    }
    const after = await preparedOn(db);
    assert.equal(after.length, MAX_PREPARED, `prepared ${after.length - before} more after ${before}`);
    assert.ok(!after.some((s) => s.includes(`SELECT ${MAX_PREPARED + 5}::int`)), 'a text past the bound was not prepared');
  });

  it('sends unmarked statements unnamed', async () => {
    const db = storage.db;
    const count = (await preparedOn(db)).length;
    await sql`SELECT 42 AS unmarked`.execute(db);
    assert.equal((await preparedOn(db)).length, count);
  });
});
