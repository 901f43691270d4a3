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

  it('counts usage and quota exactly when batches of two writers defer their counts to the end, refused writes included', async () => {
    const tenants = new TenantRepository(db);
    await tenants.ensure('counted');
    await new QuotaRepository(db).set('counted', 'limited', 'q', [{ resource: 'configmaps', hardName: 'count/configmaps', max: 6 }]);
    // A second writer with its own pool and batcher, as a second worker process has.
    const otherDb = createDatabase({ connectionString: tdb.url, maxConnections: 8 });
    const other = new ObjectStoreRepository(otherDb, { maxInFlight: 1 });
    try {
      const churn = (repo: ObjectStoreRepository, ns: string, name: string) => async () => {
        const k = key('counted', ns, name);
        let rev = (await repo.create(k, body(name))).revision;
        await outcome(repo.create(k, body(name))); // AlreadyExists: refused, counts nothing
        // Some values PostgreSQL compresses (6 KB of one letter): their bytes count as given, never as stored.
        rev = (await repo.update(k, body(name, name.endsWith('2') || name.endsWith('0') ? 'x'.repeat(6000) : 'a longer value than before'), rev)).revision;
        await outcome(repo.update(k, body(name, 'stale'), rev - 1)); // Conflict
        if (name.endsWith('0')) await repo.delete(k, rev);
      };
      const work = [
        ...Array.from({ length: 10 }, (_, i) => churn(i % 2 ? objects : other, 'free', `f${i}`)),
        ...Array.from({ length: 10 }, (_, i) => churn(i % 2 ? objects : other, 'limited', `q${i}`)),
      ];
      const results = await Promise.all(work.map((w) => w().then(() => 'ok', (err) => (isStorageError(err) ? err.code : String(err)))));
      // The quota admits 6 of the 10 creates in 'limited' (all are sent before any churn deletes its object).
      assert.equal(results.slice(10).filter((r) => r === 'QuotaExceeded').length, 4, results.join(','));
      assert.deepEqual(results.slice(0, 10), Array(10).fill('ok'));
      const { rows } = await sql<{ n: number; bytes: number }>`
        SELECT count(*)::int AS n, coalesce(sum(plinth_body_size(body)), 0)::int AS bytes FROM objects WHERE tenant = 'counted'`.execute(db);
      const usage = await tenants.usage('counted');
      for (const usageKey of ['', 'configmaps']) {
        const u = usage.find((x) => x.usageKey === usageKey);
        assert.deepEqual({ objects: u?.objects, bytes: u?.bytes }, { objects: rows[0].n, bytes: rows[0].bytes }, `usage key '${usageKey}'`);
      }
      const quota = await sql<{ objects: number; n: number }>`
        SELECT q.objects::int AS objects, (SELECT count(*)::int FROM objects o WHERE o.tenant = 'counted' AND o.namespace = 'limited') AS n
        FROM quota_usage q WHERE q.tenant = 'counted' AND q.namespace = 'limited'`.execute(db);
      assert.equal(quota.rows[0].objects, quota.rows[0].n);
      // Limits set afterwards start from the exact count: one more object fits, the next is refused.
      await tenants.setLimits('counted', [{ usageKey: '', maxObjects: rows[0].n + 1 }]);
      const more = await Promise.all([0, 1, 2].map((i) => outcome(objects.create(key('counted', 'free', `more${i}`), body(`more${i}`)))));
      assert.deepEqual(more.filter((r) => typeof r === 'number').length, 1, more.join(','));
      assert.deepEqual(more.filter((r) => r === 'LimitExceeded').length, 2, more.join(','));
    } finally {
      await otherDb.destroy();
    }
  });
});
