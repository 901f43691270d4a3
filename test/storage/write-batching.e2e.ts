import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { createDatabase, type DB, ObjectStoreRepository, QuotaRepository, TenantRepository, isStorageError, type ObjectKey } from '@plinth/storage';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

const key = (tenant: string, namespace: string, name: string): ObjectKey => ({ tenant, resource: 'configmaps', namespace, name });
const body = (name: string, v = '1') => ({ metadata: { name }, data: { v } });

/** The outcome of a settled write: its revision, or its StorageError code ('other' for anything else). */
async function outcome(p: Promise<{ revision: number }>): Promise<number | string> {
  try {
    return (await p).revision;
  } catch (err) {
    return isStorageError(err) ? err.code : 'other';
  }
}

/** Every committed revision above `after` has exactly one change row and the counter is at the last one. */
async function assertContiguous(db: Kysely<DB>, after: number): Promise<number[]> {
  const { rows } = await sql<{ revision: number }>`SELECT revision FROM changes WHERE revision > ${after} ORDER BY revision`.execute(db);
  const revs = rows.map((r) => r.revision);
  revs.forEach((r, i) => assert.equal(r, after + 1 + i, `revision ${r} follows ${i === 0 ? after : revs[i - 1]}`));
  const counter = (await sql<{ value: number }>`SELECT value FROM revision_counter`.execute(db)).rows[0].value;
  assert.equal(counter, after + revs.length);
  return revs;
}

describe('batched writes', () => {
  let tdb: TestDatabase;
  let db: Kysely<DB>;
  const sizes: number[] = [];
  let objects: ObjectStoreRepository;

  before(async () => {
    tdb = await createTestDatabase('batching');
    db = createDatabase({ connectionString: tdb.url, maxConnections: 8 });
    objects = new ObjectStoreRepository(db, { maxInFlight: 1, onBatch: (n) => sizes.push(n) });
    const tenants = new TenantRepository(db);
    await tenants.ensure('capped');
    await tenants.setLimits('capped', [{ usageKey: 'configmaps', maxObjects: 5 }]);
    await new QuotaRepository(db).set('default', 'quota', 'q', [{ resource: 'configmaps', hardName: 'count/configmaps', max: 3 }]);
  });
  after(async () => {
    await db.destroy();
    await tdb.drop();
  });

  it('fails only the refused writes of a batch, each with its own error, and commits the rest with contiguous revisions', async () => {
    const start = await objects.currentRevision();
    const seed = await objects.create(key('default', 'b', 'seed'), body('seed'));
    sizes.length = 0;
    const writes = [
      ...Array.from({ length: 10 }, (_, i) => objects.create(key('default', 'b', `c${i}`), body(`c${i}`))),
      objects.create(key('default', 'b', 'seed'), body('seed')), // AlreadyExists
      objects.create(key('default', 'b', 'twice'), body('twice')),
      objects.create(key('default', 'b', 'twice'), body('twice')), // AlreadyExists, against a create of the same batch
      objects.update(key('default', 'b', 'seed'), body('seed', '2'), seed.revision),
      objects.update(key('default', 'b', 'seed'), body('seed', '3'), seed.revision), // Conflict: the update before it won
      objects.delete(key('default', 'b', 'missing'), null), // NotFound
      objects.update(key('default', 'b', 'missing'), body('missing'), null), // NotFound
      ...Array.from({ length: 7 }, (_, i) => objects.create(key('capped', 'b', `l${i}`), body(`l${i}`))), // 5 fit, 2 LimitExceeded
      ...Array.from({ length: 5 }, (_, i) => objects.create(key('default', 'quota', `q${i}`), body(`q${i}`))), // 3 fit, 2 QuotaExceeded
      objects.create(key('nowhere', 'b', 'x'), body('x')), // TenantTerminating: no such tenant
    ];
    const tenantOf = [...Array(17).fill('default'), ...Array(7).fill('capped'), ...Array(5).fill('default'), 'nowhere'];
    assert.equal(tenantOf.length, writes.length);
    const results = await Promise.all(writes.map(outcome));
    assert.ok(Math.max(...sizes) > 1, `writes were sent one by one: ${sizes.join(',')}`);
    const codes = results.filter((r) => typeof r === 'string');
    const count = (c: string) => codes.filter((x) => x === c).length;
    assert.deepEqual(
      { exists: count('AlreadyExists'), conflict: count('Conflict'), missing: count('NotFound'), limit: count('LimitExceeded'), quota: count('QuotaExceeded'), tenant: count('TenantTerminating'), other: count('other') },
      { exists: 2, conflict: 1, missing: 2, limit: 2, quota: 2, tenant: 1, other: 0 },
    );
    assert.deepEqual(results.slice(0, 10).map((r) => typeof r), Array(10).fill('number'));
    const committed = results.filter((r): r is number => typeof r === 'number').sort((a, b) => a - b);
    const revs = await assertContiguous(db, start);
    assert.deepEqual(revs, [seed.revision, ...committed]);
    // Revisions follow submission order among one tenant's writes (a batch holds one tenant's writes; another
    // tenant's may go in a later batch).
    for (const tenant of ['default', 'capped']) {
      const inOrder = results.filter((r, i): r is number => typeof r === 'number' && tenantOf[i] === tenant);
      assert.deepEqual(inOrder, [...inOrder].sort((a, b) => a - b), tenant);
    }
    assert.deepEqual((await objects.get(key('default', 'b', 'seed')))?.body.data, { v: '2' });
    const usage = (await new TenantRepository(db).usage('capped')).find((u) => u.usageKey === 'configmaps');
    assert.equal(usage?.objects, 5);
  });

  it('sends writes one by one when PostgreSQL cannot read one of them, so only that one fails', async () => {
    const start = await objects.currentRevision();
    const writes = [
      ...Array.from({ length: 4 }, (_, i) => objects.create(key('default', 'nul', `ok${i}`), body(`ok${i}`))),
      objects.create(key('default', 'nul', 'bad'), body('bad', 'a\u0000b')), // jsonb refuses NUL
      ...Array.from({ length: 4 }, (_, i) => objects.create(key('default', 'nul', `ok${i + 4}`), body(`ok${i + 4}`))),
    ];
    const results = await Promise.all(writes.map(outcome));
    assert.equal(results[4], 'other');
    assert.equal(results.filter((r) => typeof r === 'number').length, 8);
    assert.equal((await assertContiguous(db, start)).length, 8);
  });

  it('keeps every committed object row with its change row under concurrent batched creates, updates and deletes', async () => {
    const start = await objects.currentRevision();
    const names = Array.from({ length: 8 }, (_, i) => `k${i}`);
    const rounds = await Promise.all(
      names.map(async (name) => {
        let rev = (await objects.create(key('default', 'churn', name), body(name))).revision;
        for (let i = 0; i < 10; i++) rev = (await objects.update(key('default', 'churn', name), body(name, String(i)), rev)).revision;
        return (await objects.delete(key('default', 'churn', name), rev)).revision;
      }),
    );
    assert.equal(rounds.length, names.length);
    const revs = await assertContiguous(db, start);
    assert.equal(revs.length, names.length * 12);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM objects WHERE namespace = 'churn'`.execute(db);
    assert.equal(rows[0].n, 0);
  });
});
