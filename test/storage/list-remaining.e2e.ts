import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { createDatabase, type DB, ObjectListRepository, ObjectStoreRepository, REMAINING_COUNT_CAP } from '@plinth/storage';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

// remainingItemCount costs bounded work per page: counted up to a cap, left out beyond it (upstream's field is optional).
describe('list pages: remainingItemCount is bounded', () => {
  let tdb: TestDatabase;
  let db: Kysely<DB>;
  const total = REMAINING_COUNT_CAP + 200;

  before(async () => {
    tdb = await createTestDatabase('list_remaining');
    db = createDatabase({ connectionString: tdb.url });
    // One write through the API's function (a revision to list at), the bulk straight into the table.
    await new ObjectStoreRepository(db).create({ tenant: 'default', resource: 'configmaps', namespace: 'big', name: 'a' }, { metadata: { name: 'a', namespace: 'big' } });
    await sql`
      INSERT INTO objects (tenant, resource, namespace, name, revision, body)
      SELECT 'default', 'configmaps', 'big', 'cm-' || lpad(i::text, 6, '0'), 1, jsonb_build_object('metadata', jsonb_build_object('name', 'cm-' || lpad(i::text, 6, '0'), 'namespace', 'big'))
      FROM generate_series(1, ${total - 1}) AS i
    `.execute(db);
  });
  after(async () => {
    await db.destroy();
    await tdb.drop();
  });

  it('leaves remainingItemCount out while more than the cap follow, and counts it exactly near the end', async () => {
    const lists = new ObjectListRepository(db);
    const first = await lists.list({ tenant: 'default', resource: 'configmaps', namespace: 'big', limit: 100, countRemaining: true });
    assert.equal(first.items.length, 100);
    assert.equal(first.remaining, undefined);
    // A page 150 items from the end: its remaining count is exact, at the first page's revision.
    const near = await lists.list({ tenant: 'default', resource: 'configmaps', namespace: 'big', limit: 100, countRemaining: true, after: { namespace: 'big', name: `cm-${String(total - 251).padStart(6, '0')}` }, atRevision: first.revision });
    assert.equal(near.items.length, 100);
    assert.equal(near.remaining, 150);
    const latest = await lists.list({ tenant: 'default', resource: 'configmaps', namespace: 'big', limit: 100, countRemaining: true, after: { namespace: 'big', name: `cm-${String(total - 251).padStart(6, '0')}` } });
    assert.equal(latest.remaining, 150);
  });
});
