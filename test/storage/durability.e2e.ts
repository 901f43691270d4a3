import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { createDatabase, type DB, ObjectStoreRepository } from '@plinth/storage';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

describe('durability barrier', () => {
  let tdb: TestDatabase;
  let db: Kysely<DB>;

  before(async () => {
    tdb = await createTestDatabase('durability');
    // The shared test cluster runs with synchronous_commit=off for speed; this
    // database gets the production setting before any session connects.
    const admin = new pg.Client({ connectionString: tdb.url });
    await admin.connect();
    await admin.query(`ALTER DATABASE "${tdb.name}" SET synchronous_commit = on`);
    await admin.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
    await admin.end();
    db = createDatabase({ connectionString: tdb.url });
  });
  after(async () => {
    await db.destroy();
    await tdb.drop();
  });

  it('acknowledges a write only after its own commit record is flushed to the WAL on disk', async () => {
    // Writes commit asynchronously so commits can group; the barrier must flush
    // each one before the caller gets its answer. The write's commit record is
    // found in the WAL by its transaction id; the flush position read right
    // after the write returned must already be past it. Other databases' WAL
    // (tests run in parallel) cannot make this pass or fail.
    const objects = new ObjectStoreRepository(db);
    for (let i = 0; i < 10; i++) {
      const start = (await sql<{ lsn: string }>`SELECT pg_current_wal_insert_lsn()::text AS lsn`.execute(db)).rows[0].lsn;
      const k = { tenant: 'default', resource: 'configmaps', namespace: 'dur', name: `d${i}` };
      const created = await objects.create(k, { metadata: { name: `d${i}` }, data: { v: 'x'.repeat(500) } });
      const seen = (
        await sql<{ xid: string; flushed: string }>`
          SELECT c.xmin::text AS xid, pg_current_wal_flush_lsn()::text AS flushed FROM changes c WHERE c.revision = ${created.revision}
        `.execute(db)
      ).rows[0];
      // Wait until the commit record is readable (flushed by someone) so it can be located.
      let commitEnd: string | undefined;
      for (let attempt = 0; attempt < 100 && !commitEnd; attempt++) {
        const { rows } = await sql<{ end_lsn: string }>`
          SELECT end_lsn::text FROM pg_get_wal_records_info(${start}::pg_lsn, pg_current_wal_flush_lsn())
          WHERE resource_manager = 'Transaction' AND record_type LIKE 'COMMIT%' AND xid::text = ${seen.xid}
        `.execute(db);
        commitEnd = rows[0]?.end_lsn;
        if (!commitEnd) await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(commitEnd, `commit record of transaction ${seen.xid} not found`);
      const { rows } = await sql<{ ok: boolean }>`SELECT ${seen.flushed}::pg_lsn >= ${commitEnd}::pg_lsn AS ok`.execute(db);
      assert.equal(rows[0].ok, true, `write ${i} (xid ${seen.xid}) was acknowledged at flush ${seen.flushed}, before its commit record ending at ${commitEnd}`);
    }
  });
});
