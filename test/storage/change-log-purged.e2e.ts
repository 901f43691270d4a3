import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { ChangeLogRepository, createDatabase, type DB, ObjectStoreRepository, TenantRepository } from '@plinth/storage';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

// A tenant purge deletes a tenant's rows table by table in no particular order, so a follower lagging behind can meet
// change rows whose state (kept only in objects since migration 0010) is already gone. It must read on past them.
describe('change log: a follower reads on past changes whose state a tenant purge removed', () => {
  let tdb: TestDatabase;
  let db: Kysely<DB>;

  before(async () => {
    tdb = await createTestDatabase('purged');
    db = createDatabase({ connectionString: tdb.url, maxConnections: 2 });
  });
  after(async () => {
    await db?.destroy();
    await tdb?.drop();
  });

  it('skips a whole page of them instead of reporting nothing after it, and delivers what follows', async () => {
    const objects = new ObjectStoreRepository(db);
    const changes = new ChangeLogRepository(db);
    await new TenantRepository(db).ensure('gone');
    const start = await objects.currentRevision();
    for (let i = 0; i < 7; i++) await objects.create({ tenant: 'gone', resource: 'configmaps', namespace: 'ns', name: `cm-${i}` }, { metadata: { name: `cm-${i}` } });
    const kept = await objects.create({ tenant: 'default', resource: 'configmaps', namespace: 'ns', name: 'after' }, { metadata: { name: 'after' } });
    // What a purge of tenant `gone` may have done so far: its objects deleted, its change rows not yet.
    await sql`DELETE FROM objects WHERE tenant = 'gone'`.execute(db);
    const events = await changes.changesAfter(start, 3);
    assert.deepEqual(
      events.map((e) => [e.revision, e.key.tenant, e.key.name]),
      [[kept.revision, 'default', 'after']],
    );
    assert.deepEqual(await changes.changesAfter(kept.revision, 3), []);
  });
});
