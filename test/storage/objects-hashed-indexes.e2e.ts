import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { createDatabase, type DB, type ObjectKey, ObjectListRepository, ObjectStoreRepository, OwnerRepository, TenantRepository } from '@plinth/storage';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

const key = (tenant: string, namespace: string, name: string): ObjectKey => ({ tenant, resource: 'configmaps', namespace, name });
const body = (namespace: string, name: string, uid: string, labels?: Record<string, string>) => ({ metadata: { name, namespace, uid, ...(labels ? { labels } : {}) }, data: { v: 'ü' } });
const names = (items: Array<{ key: ObjectKey }>) => items.map((i) => `${i.key.namespace}/${i.key.name}`);

describe('objects without a stored labels copy and with hashed name and uid indexes (migration 0011)', () => {
  let tdb: TestDatabase;
  let db: Kysely<DB>;
  let objects: ObjectStoreRepository;
  let lists: ObjectListRepository;
  let owners: OwnerRepository;
  let before1 = 0;

  before(async () => {
    tdb = await createTestDatabase('hashed_idx');
    db = createDatabase({ connectionString: tdb.url, maxConnections: 4 });
    objects = new ObjectStoreRepository(db);
    lists = new ObjectListRepository(db);
    owners = new OwnerRepository(db);
    await new TenantRepository(db).ensure('other');
    await objects.create(key('default', 'h1', 'same'), body('h1', 'same', 'uid-1', { app: 'web', tier: 'front' }));
    await objects.create(key('default', 'h2', 'same'), body('h2', 'same', 'uid-2', { app: 'db' }));
    await objects.create(key('default', 'h1', 'different'), body('h1', 'different', 'uid-3'));
    // The same uid and name in another tenant: never returned for this tenant.
    await objects.create(key('other', 'h1', 'same'), body('h1', 'same', 'uid-1', { app: 'web' }));
    before1 = await objects.currentRevision();
    await objects.update(key('default', 'h2', 'same'), body('h2', 'same', 'uid-2', { app: 'web' }), null);
    await objects.delete(key('default', 'h1', 'same'), null);
  });
  after(async () => {
    await db.destroy();
    await tdb.drop();
  });

  it('stores no labels column: the body is the only copy', async () => {
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM information_schema.columns WHERE table_name = 'objects' AND column_name = 'labels'`.execute(db);
    assert.equal(rows[0].n, 0);
  });

  it('selects by label from the body, now and at a past revision, objects without labels included', async () => {
    const q = { tenant: 'default', resource: 'configmaps' };
    assert.deepEqual(names((await lists.list({ ...q, labelRequirements: [{ key: 'app', operator: 'Equals', values: ['web'] }] })).items), ['h2/same']);
    assert.deepEqual(names((await lists.list({ ...q, labelRequirements: [{ key: 'app', operator: 'DoesNotExist', values: [] }] })).items), ['h1/different']);
    assert.deepEqual(names((await lists.list({ ...q, atRevision: before1, labelRequirements: [{ key: 'app', operator: 'In', values: ['web', 'db'] }] })).items), ['h1/same', 'h2/same']);
    assert.deepEqual(names((await lists.list({ ...q, atRevision: before1, labelRequirements: [{ key: 'tier', operator: 'Exists', values: [] }] })).items), ['h1/same']);
    assert.deepEqual(names((await lists.list({ ...q, atRevision: before1, labelRequirements: [{ key: 'app', operator: 'NotIn', values: ['web'] }] })).items), ['h1/different', 'h2/same']);
  });

  it('lists one name across namespaces, now and at a past revision, in this tenant only', async () => {
    const byName = (name: string) => ({ tenant: 'default', resource: 'configmaps', fieldRequirements: [{ field: 'metadata.name' as const, operator: '=' as const, value: name }] });
    assert.deepEqual(names((await lists.list(byName('same'))).items), ['h2/same']);
    assert.deepEqual(names((await lists.list({ ...byName('same'), atRevision: before1 })).items), ['h1/same', 'h2/same']);
    assert.deepEqual(names((await lists.list({ ...byName('different'), atRevision: before1 })).items), ['h1/different']);
    assert.deepEqual(names((await lists.list(byName('missing'))).items), []);
    assert.deepEqual(names((await lists.list({ ...byName('same'), limit: 1 })).items), ['h2/same']);
  });

  it('finds objects by uid in their own tenant only', async () => {
    assert.deepEqual([...(await owners.existingUids('default', ['uid-1', 'uid-2', 'uid-3', 'nope']))].sort(), ['uid-2', 'uid-3']);
    assert.deepEqual([...(await owners.existingUids('other', ['uid-1', 'uid-2']))], ['uid-1']);
    assert.deepEqual(names(await owners.objectsByUid('default', ['uid-2', 'uid-1'])), ['h2/same']);
    assert.deepEqual(names(await owners.objectsByUid('other', ['uid-1'])), ['h1/same']);
  });

  it('reports an owner reference as dangling only when no object of the same tenant has its uid', async () => {
    await objects.create(key('default', 'h1', 'child-ok'), { metadata: { name: 'child-ok', namespace: 'h1', uid: 'c1', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'different', uid: 'uid-3' }] } });
    // uid-1 exists, but only in tenant other.
    await objects.create(key('default', 'h1', 'child-orphan'), { metadata: { name: 'child-orphan', namespace: 'h1', uid: 'c2', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'same', uid: 'uid-1' }] } });
    assert.deepEqual(names(await owners.withDanglingOwners()), ['h1/child-orphan']);
  });
});
