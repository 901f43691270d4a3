import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import {
  ChangeLogRepository,
  createDatabase,
  type DB,
  ObjectListRepository,
  ObjectStoreRepository,
  StorageError,
} from '../../libs/storage/src/index.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

const T = 'default';
const R = 'configmaps';
const key = (namespace: string, name: string) => ({ tenant: T, resource: R, namespace, name });
const body = (name: string, labels: Record<string, string> = {}, data: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', labels },
  data,
});

describe('storage conformance (PostgreSQL store)', () => {
  let tdb: TestDatabase;
  let db: Kysely<DB>;
  let objects: ObjectStoreRepository;
  let lists: ObjectListRepository;
  let changes: ChangeLogRepository;

  before(async () => {
    tdb = await createTestDatabase('conformance');
    db = createDatabase({ connectionString: tdb.url });
    objects = new ObjectStoreRepository(db);
    lists = new ObjectListRepository(db);
    changes = new ChangeLogRepository(db);
  });
  after(async () => {
    await db.destroy();
    await tdb.drop();
  });

  it('creates an object and reads it back with its revision as resourceVersion', async () => {
    const created = await objects.create(key('ns', 'a'), body('a', { app: 'x' }));
    const got = await objects.get(key('ns', 'a'));
    assert.ok(got);
    assert.equal(got.revision, created.revision);
    assert.equal((got.body.metadata as { resourceVersion: string }).resourceVersion, String(created.revision));
    assert.deepEqual((got.body.metadata as { labels: unknown }).labels, { app: 'x' });
  });

  it('returns undefined for a missing object', async () => {
    assert.equal(await objects.get(key('ns', 'missing')), undefined);
  });

  it('refuses a second create of the same key with AlreadyExists and consumes no revision', async () => {
    const before = await objects.currentRevision();
    await assert.rejects(objects.create(key('ns', 'a'), body('a')), (e: unknown) => e instanceof StorageError && e.code === 'AlreadyExists');
    assert.equal(await objects.currentRevision(), before);
  });

  it('updates conditionally and rejects a stale revision with Conflict', async () => {
    const cur = (await objects.get(key('ns', 'a')))!;
    const updated = await objects.update(key('ns', 'a'), body('a', { app: 'y' }), cur.revision);
    assert.ok(updated.revision > cur.revision);
    await assert.rejects(objects.update(key('ns', 'a'), body('a', { app: 'z' }), cur.revision), (e: unknown) => e instanceof StorageError && e.code === 'Conflict');
    const after = (await objects.get(key('ns', 'a')))!;
    assert.deepEqual((after.body.metadata as { labels: unknown }).labels, { app: 'y' });
  });

  it('updates unconditionally when no revision is expected', async () => {
    const up = await objects.update(key('ns', 'a'), body('a', { app: 'w' }), null);
    assert.equal((await objects.get(key('ns', 'a')))!.revision, up.revision);
  });

  it('deletes conditionally, rejecting a stale revision, and returns the last state', async () => {
    const c = await objects.create(key('ns', 'del'), body('del', {}, { k: 'v' }));
    await objects.update(key('ns', 'del'), body('del', {}, { k: 'v2' }), c.revision);
    await assert.rejects(objects.delete(key('ns', 'del'), c.revision), (e: unknown) => e instanceof StorageError && e.code === 'Conflict');
    const gone = await objects.delete(key('ns', 'del'), null);
    assert.deepEqual(gone.body.data, { k: 'v2' });
    assert.equal(await objects.get(key('ns', 'del')), undefined);
    await assert.rejects(objects.delete(key('ns', 'del'), null), (e: unknown) => e instanceof StorageError && e.code === 'NotFound');
  });

  it('lists at the newest revision in key order, with label selectors pushed to SQL', async () => {
    for (const n of ['l3', 'l1', 'l2']) await objects.create(key('ls', n), body(n, { tier: n === 'l2' ? 'back' : 'front' }));
    const all = await lists.list({ tenant: T, resource: R, namespace: 'ls' });
    assert.deepEqual(all.items.map((i) => i.key.name), ['l1', 'l2', 'l3']);
    assert.equal(all.revision, await objects.currentRevision());
    const front = await lists.list({ tenant: T, resource: R, namespace: 'ls', labelRequirements: [{ key: 'tier', operator: 'In', values: ['front'] }] });
    assert.deepEqual(front.items.map((i) => i.key.name), ['l1', 'l3']);
    const notFront = await lists.list({ tenant: T, resource: R, namespace: 'ls', labelRequirements: [{ key: 'tier', operator: 'NotEquals', values: ['front'] }] });
    assert.deepEqual(notFront.items.map((i) => i.key.name), ['l2']);
  });

  it('lists the state at a past revision, including objects since changed or deleted', async () => {
    const a = await objects.create(key('past', 'p1'), body('p1', {}, { v: '1' }));
    await objects.create(key('past', 'p2'), body('p2', {}, { v: '1' }));
    const snapshot = await objects.currentRevision();
    await objects.update(key('past', 'p1'), body('p1', {}, { v: '2' }), a.revision);
    await objects.delete(key('past', 'p2'), null);
    await objects.create(key('past', 'p3'), body('p3'));
    const then = await lists.list({ tenant: T, resource: R, namespace: 'past', atRevision: snapshot });
    assert.equal(then.revision, snapshot);
    assert.deepEqual(then.items.map((i) => [i.key.name, i.body.data]), [['p1', { v: '1' }], ['p2', { v: '1' }]]);
    const now = await lists.list({ tenant: T, resource: R, namespace: 'past' });
    assert.deepEqual(now.items.map((i) => [i.key.name, i.body.data]), [['p1', { v: '2' }], ['p3', {}]]);
  });

  it('pages with limit and a cursor over one snapshot, counting the remaining items', async () => {
    for (let i = 0; i < 7; i++) await objects.create(key('pg', `item-${i}`), body(`item-${i}`));
    const p1 = await lists.list({ tenant: T, resource: R, namespace: 'pg', limit: 3, countRemaining: true });
    assert.deepEqual(p1.items.map((i) => i.key.name), ['item-0', 'item-1', 'item-2']);
    assert.equal(p1.remaining, 4);
    await objects.delete(key('pg', 'item-4'), null);
    await objects.create(key('pg', 'item-9'), body('item-9'));
    const p2 = await lists.list({ tenant: T, resource: R, namespace: 'pg', limit: 3, after: p1.next, atRevision: p1.revision, countRemaining: true });
    assert.deepEqual(p2.items.map((i) => i.key.name), ['item-3', 'item-4', 'item-5']);
    assert.equal(p2.revision, p1.revision);
    const p3 = await lists.list({ tenant: T, resource: R, namespace: 'pg', limit: 3, after: p2.next, atRevision: p1.revision });
    assert.deepEqual(p3.items.map((i) => i.key.name), ['item-6']);
    assert.equal(p3.next, undefined);
  });

  it('rejects a list at a revision newer than the newest with TooLargeResourceVersion', async () => {
    const cur = await objects.currentRevision();
    await assert.rejects(lists.list({ tenant: T, resource: R, atRevision: cur + 100 }), (e: unknown) => e instanceof StorageError && e.code === 'TooLargeResourceVersion');
  });

  it('follows the change log from a revision: every later change once, in order, with previous states', async () => {
    const from = await objects.currentRevision();
    const c = await objects.create(key('fl', 'f'), body('f', {}, { n: '1' }));
    const u = await objects.update(key('fl', 'f'), body('f', {}, { n: '2' }), c.revision);
    const d = await objects.delete(key('fl', 'f'), u.revision);
    const evs = await changes.changesAfter(from, 100);
    assert.deepEqual(evs.map((e) => [e.revision, e.type]), [[c.revision, 'ADDED'], [u.revision, 'MODIFIED'], [d.revision, 'DELETED']]);
    assert.deepEqual(evs[1].prevObject?.data, { n: '1' });
    assert.equal((evs[1].prevObject?.metadata as { resourceVersion: string }).resourceVersion, String(c.revision));
    assert.deepEqual(evs[2].object.data, { n: '2' });
    assert.deepEqual(await changes.changesAfter(d.revision, 100), []);
  });

  it('compacts old changes and then answers Expired for lists and follows below the compacted revision', async () => {
    const c = await objects.create(key('cp', 'x'), body('x'));
    await objects.update(key('cp', 'x'), body('x', { a: 'b' }), c.revision);
    const n = await changes.compact(new Date(Date.now() + 60_000), 100000);
    assert.ok(n > 0);
    const compacted = await changes.compactedRevision();
    assert.ok(compacted >= c.revision);
    await assert.rejects(changes.changesAfter(c.revision - 1, 10), (e: unknown) => e instanceof StorageError && e.code === 'Expired');
    await assert.rejects(lists.list({ tenant: T, resource: R, atRevision: c.revision - 1 }), (e: unknown) => e instanceof StorageError && e.code === 'Expired');
    const latest = await lists.list({ tenant: T, resource: R, namespace: 'cp' });
    assert.deepEqual(latest.items.map((i) => i.key.name), ['x']);
  });

  it('keeps tenants apart: the same key in two tenants is two objects', async () => {
    await objects.create({ tenant: 'other', resource: R, namespace: 'ns', name: 'a' }, body('a', { t: 'other' }));
    const mine = (await objects.get(key('ns', 'a')))!;
    const theirs = (await objects.get({ tenant: 'other', resource: R, namespace: 'ns', name: 'a' }))!;
    assert.notDeepEqual((mine.body.metadata as { labels: unknown }).labels, { t: 'other' });
    assert.deepEqual((theirs.body.metadata as { labels: unknown }).labels, { t: 'other' });
    const listed = await lists.list({ tenant: 'other', resource: R });
    assert.deepEqual(listed.items.map((i) => i.key.tenant), ['other']);
  });
});
