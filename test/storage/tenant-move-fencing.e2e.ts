import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { createDatabase, type DB, isStaleMove, ObjectStoreRepository, TenantMoveRepository, TenantRepository } from '@plinth/storage';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

const T = 'fenced';
const key = (name: string) => ({ tenant: T, resource: 'configmaps', namespace: 'default', name });

/** Everything of the tenant on `db`, as comparable text: its row and every row of it in objects, changes and tenant_usage. */
async function snapshot(db: Kysely<DB>): Promise<string> {
  const parts: unknown[] = [];
  parts.push((await sql`SELECT name, uid, phase, fenced, arrived_revision, history_floor, move_epoch FROM tenants WHERE name = ${T}`.execute(db)).rows);
  parts.push((await sql`SELECT name, revision, body FROM objects WHERE tenant = ${T} ORDER BY name`.execute(db)).rows);
  parts.push((await sql`SELECT revision, name FROM changes WHERE tenant = ${T} ORDER BY revision`.execute(db)).rows);
  parts.push((await sql`SELECT usage_key, objects, bytes FROM tenant_usage WHERE tenant = ${T} ORDER BY usage_key`.execute(db)).rows);
  parts.push((await sql`SELECT value FROM revision_counter`.execute(db)).rows);
  return JSON.stringify(parts);
}

async function refusedStale(step: Promise<unknown>, what: string): Promise<void> {
  await assert.rejects(step, (err) => {
    assert.ok(isStaleMove(err), `${what}: ${(err as Error).message}`);
    return true;
  });
}

// Two databases as two shards; two movers of one tenant, the older one (generation 1) stale once generation 2 took
// the tenant's rows over. Every step of the stale one fails and changes nothing, on either shard.
describe('storage: tenant moves fenced by generation (migration 0021)', () => {
  let srcDb: TestDatabase;
  let dstDb: TestDatabase;
  let src: Kysely<DB>;
  let dst: Kysely<DB>;
  const moves = new TenantMoveRepository();

  before(async () => {
    [srcDb, dstDb] = await Promise.all([createTestDatabase('move_fence_src'), createTestDatabase('move_fence_dst')]);
    src = createDatabase({ connectionString: srcDb.url, maxConnections: 4 });
    dst = createDatabase({ connectionString: dstDb.url, maxConnections: 4 });
    await new TenantRepository(src).ensure(T, 'object-uid-1');
    const objects = new ObjectStoreRepository(src);
    for (let i = 0; i < 50; i++) await objects.create(key(`o-${i}`), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `o-${i}`, namespace: 'default' }, data: { v: '0' } });
  });
  after(async () => {
    await src?.destroy();
    await dst?.destroy();
    await srcDb?.drop();
    await dstDb?.drop();
  });

  it('refuses every step of a mover whose generation was superseded, changing nothing', async () => {
    // Generation 1 starts: takes both rows over, copies half, fences the source.
    const d1 = (await moves.claimSource(src, T, 1))!;
    assert.equal(d1.objectUid, 'object-uid-1');
    await moves.prepareArrival(dst, T, d1, 1);
    const half = await moves.copyObjects(src, dst, T, 1, undefined, 25);
    assert.equal(half?.count, 25);
    assert.notEqual(await moves.fence(src, T, 1, true), undefined);

    // Generation 2 takes over: the source is unfenced (generation 1 can no longer switch) and the destination emptied.
    const d2 = (await moves.claimSource(src, T, 2))!;
    assert.equal(d2.epoch, 2);
    await moves.prepareArrival(dst, T, d2, 2);
    await moves.copyObjects(src, dst, T, 2, undefined, 10);
    const [{ fenced }] = (await sql<{ fenced: boolean }>`SELECT fenced FROM tenants WHERE name = ${T}`.execute(src)).rows;
    assert.equal(fenced, false, 'taking the source over lifted the stale fence');
    // A write on the source after the take-over, which a stale copy must not carry anywhere.
    await new ObjectStoreRepository(src).update(key('o-0'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'o-0', namespace: 'default' }, data: { v: 'new' } }, null);

    const beforeSrc = await snapshot(src);
    const beforeDst = await snapshot(dst);
    await refusedStale(moves.copyObjects(src, dst, T, 1, half, 100), 'copyObjects');
    await refusedStale(moves.copyChanges(src, dst, T, 1, 0, Number.MAX_SAFE_INTEGER, 1000, true), 'copyChanges');
    await refusedStale(moves.copyRest(src, dst, T, 1), 'copyRest');
    await refusedStale(moves.fence(src, T, 1, true), 'fence');
    await refusedStale(moves.fence(src, T, 1, false), 'unfence');
    await refusedStale(moves.arrive(dst, T, 1, 1_000_000), 'arrive');
    await refusedStale(moves.discard(dst, T, 1), 'discard of the destination');
    await refusedStale(moves.discard(src, T, 1), 'discard of the source');
    await refusedStale(moves.prepareArrival(dst, T, d1, 1), 'prepareArrival');
    await refusedStale(moves.claimSource(src, T, 1), 'claimSource');
    assert.equal(await snapshot(src), beforeSrc, 'the source is as it was');
    assert.equal(await snapshot(dst), beforeDst, 'the destination is as it was');

    // Generation 2 goes on undisturbed, and a deletion taking the destination over stops it in turn.
    assert.ok(await moves.copyObjects(src, dst, T, 2, undefined, 100));
    const e = await moves.takeOver(dst, T);
    assert.equal(e, 3);
    await refusedStale(moves.copyObjects(src, dst, T, 2, undefined, 100), 'copyObjects after a take-over');
    await moves.discard(dst, T, 3);
    assert.equal((await sql`SELECT 1 FROM objects WHERE tenant = ${T}`.execute(dst)).rows.length, 0);
    assert.equal((await sql`SELECT 1 FROM tenants WHERE name = ${T}`.execute(dst)).rows.length, 0);
  });

  it('never lets a Tenant object adopt a row made for another one', async () => {
    const tenants = new TenantRepository(src);
    assert.equal(await tenants.ensure('owned', 'uid-a'), true);
    assert.equal(await tenants.ensure('owned', 'uid-b'), false);
    assert.equal((await tenants.get('owned'))?.objectUid, 'uid-a', 'the row stays bound to the Tenant object it was made for');
    // A row from before migration 0021 is bound to the first Tenant object that ensures it.
    await sql`INSERT INTO tenants (name, uid, phase, created_revision) VALUES ('legacy', gen_random_uuid(), 'Active', 0)`.execute(src);
    await tenants.ensure('legacy', 'uid-c');
    await tenants.ensure('legacy', 'uid-d');
    assert.equal((await tenants.get('legacy'))?.objectUid, 'uid-c');
  });
});
