import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { ChangeLogRepository, createDatabase, type DB, ObjectStoreRepository } from '@plinth/storage';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

describe('durability barrier', () => {
  let tdb: TestDatabase;
  let db: Kysely<DB>;

  /** The session setting a plain connection to the test database gets (the server's, the database's). */
  const plainSetting = async (): Promise<string> => {
    const c = new pg.Client({ connectionString: tdb.url });
    await c.connect();
    try {
      return (await c.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0].synchronous_commit;
    } finally {
      await c.end();
    }
  };
  const alterDatabase = async (setting: string): Promise<void> => {
    const admin = new pg.Client({ connectionString: tdb.url });
    await admin.connect();
    await admin.query(`ALTER DATABASE "${tdb.name}" SET synchronous_commit = ${setting}`);
    await admin.end();
  };

  before(async () => {
    tdb = await createTestDatabase('durability');
    // An external PostgreSQL may turn synchronous_commit off for the server, a role or the
    // database (the shared test cluster does for the server, for speed); this database also does,
    // so the guarantee is tested where it does not come from the server's settings.
    await alterDatabase('off');
    const admin = new pg.Client({ connectionString: tdb.url });
    await admin.connect();
    await admin.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
    await admin.end();
    db = createDatabase({ connectionString: tdb.url });
  });
  after(async () => {
    await db.destroy();
    await tdb.drop();
  });

  it('turns synchronous_commit on for its sessions where the database turned it off, and keeps a stricter setting', async () => {
    assert.equal(await plainSetting(), 'off', 'precondition: sessions of this database start with synchronous_commit off');
    const { rows } = await sql<{ synchronous_commit: string }>`SHOW synchronous_commit`.execute(db);
    assert.equal(rows[0].synchronous_commit, 'on');
    // remote_apply waits for standbys too: stronger than what the barrier needs, so it stays.
    await alterDatabase('remote_apply');
    const strict = createDatabase({ connectionString: tdb.url, maxConnections: 1 });
    try {
      assert.equal((await sql<{ synchronous_commit: string }>`SHOW synchronous_commit`.execute(strict)).rows[0].synchronous_commit, 'remote_apply');
    } finally {
      await strict.destroy();
      await alterDatabase('off');
    }
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
      // Wait until the commit record is readable (flushed by someone) so it can be located; the WAL
      // reader refuses a range that ends at its start, so it is only called once something is flushed.
      let commitEnd: string | undefined;
      for (let attempt = 0; attempt < 100 && !commitEnd; attempt++) {
        const { rows } = await sql<{ end_lsn: string }>`
          SELECT r.end_lsn::text
          FROM (SELECT pg_current_wal_flush_lsn() AS flushed WHERE pg_current_wal_flush_lsn() > ${start}::pg_lsn) f,
            LATERAL pg_get_wal_records_info(${start}::pg_lsn, f.flushed) r
          WHERE r.resource_manager = 'Transaction' AND r.record_type LIKE 'COMMIT%' AND r.xid::text = ${seen.xid}
        `.execute(db);
        commitEnd = rows[0]?.end_lsn;
        if (!commitEnd) await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(commitEnd, `commit record of transaction ${seen.xid} not found`);
      const { rows } = await sql<{ ok: boolean }>`SELECT ${seen.flushed}::pg_lsn >= ${commitEnd}::pg_lsn AS ok`.execute(db);
      assert.equal(rows[0].ok, true, `write ${i} (xid ${seen.xid}) was acknowledged at flush ${seen.flushed}, before its commit record ending at ${commitEnd}`);
    }
  });
  it('answers a read of a row or change it saw made durable without waiting for other writers, and flushes before answering a newer row', async () => {
    // Every call of the barrier also counts itself here (this database only; restored below).
    const original = (await sql<{ def: string }>`SELECT pg_get_functiondef('plinth_flush()'::regprocedure) AS def`.execute(db)).rows[0].def;
    await sql`CREATE SEQUENCE flush_calls`.execute(db);
    await sql`GRANT USAGE ON SEQUENCE flush_calls TO PUBLIC`.execute(db);
    await sql
      .raw(`CREATE OR REPLACE FUNCTION plinth_flush() RETURNS void LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public AS $fn$ SELECT nextval('flush_calls'); SELECT pg_logical_emit_message(true, 'plinth', '') $fn$`)
      .execute(db);
    const flushes = async () => (await sql<{ n: number }>`SELECT CASE WHEN is_called THEN last_value ELSE 0 END::int AS n FROM flush_calls`.execute(db)).rows[0].n;
    // Another writer commits asynchronously without end (this database's sessions have synchronous_commit off), so
    // the WAL nearly always holds records not yet flushed: the global check says "not durable" for every read.
    const other = new pg.Client({ connectionString: tdb.url });
    await other.connect();
    await other.query('CREATE TABLE scratch (v int)');
    let writing = true;
    const otherWrites = (async () => {
      while (writing) await other.query('INSERT INTO scratch VALUES (1)');
    })();
    const objects = new ObjectStoreRepository(db);
    const changes = new ChangeLogRepository(db);
    const key = (name: string) => ({ tenant: 'default', resource: 'configmaps', namespace: 'dur', name });
    try {
      const written = await objects.create(key('known'), { metadata: { name: 'known' } });
      let unflushedSeen = 0;
      const before = await flushes();
      for (let i = 0; i < 30; i++) {
        const { rows } = await sql<{ behind: boolean }>`SELECT pg_current_wal_insert_lsn() > pg_current_wal_flush_lsn() AS behind`.execute(db);
        if (rows[0].behind) unflushedSeen++;
        assert.equal((await objects.get(key('known')))?.revision, written.revision);
        const page = await changes.changesAfter(written.revision - 1, 1);
        assert.deepEqual(
          page.map((c) => c.revision),
          [written.revision],
        );
      }
      assert.ok(unflushedSeen > 0, 'precondition: the other writer left WAL unflushed while the reads ran');
      assert.equal(await flushes(), before, 'a read of a row, or of a page of the change log, whose write this process acknowledged waited for a flush');

      // Rows committed by someone else, asynchronously and not flushed: each read must flush before it answers.
      // (The global check may find the WAL flushed at that instant; the attempts end once a read did flush.)
      let flushedFor: string | undefined;
      for (let i = 0; i < 5 && !flushedFor; i++) {
        const name = `fresh-${i}`;
        const calls = await flushes();
        await other.query(`SELECT plinth_create('default', 'configmaps', 'dur', $1, $2::jsonb)`, [name, JSON.stringify({ metadata: { name } })]);
        const committedBy = (await other.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0].lsn;
        assert.ok(await objects.get(key(name)));
        const { rows } = await sql<{ ok: boolean; flushed: string }>`SELECT pg_current_wal_flush_lsn() >= ${committedBy}::pg_lsn AS ok, pg_current_wal_flush_lsn()::text AS flushed`.execute(db);
        assert.equal(rows[0].ok, true, `the read of unflushed ${name} answered at flush ${rows[0].flushed}, before its commit (WAL up to ${committedBy})`);
        if ((await flushes()) > calls) flushedFor = name;
      }
      assert.ok(flushedFor, 'no read of an unflushed row called the barrier');
      // That flush made the row's revision known durable: reading the same row again needs none.
      const afterFresh = await flushes();
      for (let i = 0; i < 10; i++) assert.ok(await objects.get(key(flushedFor)));
      assert.equal(await flushes(), afterFresh, 'a row covered by a flush this process ran was read with another flush');
    } finally {
      writing = false;
      await otherWrites;
      await other.end();
      await sql.raw(original).execute(db);
    }
  });
});
