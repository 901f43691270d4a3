import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { createDatabase, type DB, StorageError, TenantRepository } from '@plinth/storage';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';
import type { ConformanceStorage, ConformanceStorageFactory } from './conformance-storage.js';

const T = 'default';
const R = 'configmaps';
const key = (namespace: string, name: string) => ({ tenant: T, resource: R, namespace, name });
const body = (name: string, labels: Record<string, string> = {}, data: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', labels },
  data,
});
const isCode = (code: string) => (e: unknown) => e instanceof StorageError && e.code === code;

/**
 * The storage conformance suite (upstream's storage/testing store tests):
 * create, get, list at the newest and at a past revision, paging,
 * conditional update and delete, history replay, live watches from a
 * revision, compaction and tenants. Runs against whatever `factory`
 * builds, so the same assertions hold for the PostgreSQL store and for the
 * store read through a replica's watch cache.
 */
export function describeStorageConformance(label: string, factory: ConformanceStorageFactory): void {
  describe(`storage conformance (${label})`, () => {
    let tdb: TestDatabase;
    let db: Kysely<DB>;
    let s: ConformanceStorage;

    before(async () => {
      tdb = await createTestDatabase('conformance');
      db = createDatabase({ connectionString: tdb.url });
      s = await factory(db, tdb.url);
      // Storage accepts objects only of tenants that exist (and are Active).
      for (const t of ['other', 'elsewhere']) await new TenantRepository(db).ensure(t);
    });
    after(async () => {
      await s?.close();
      await db?.destroy();
      await tdb?.drop();
    });

    it('creates an object and reads it back with its revision as resourceVersion', async () => {
      const created = await s.objects.create(key('ns', 'a'), body('a', { app: 'x' }));
      const got = await s.objects.get(key('ns', 'a'));
      assert.ok(got);
      assert.equal(got.revision, created.revision);
      assert.equal((got.body.metadata as { resourceVersion: string }).resourceVersion, String(created.revision));
      assert.deepEqual((got.body.metadata as { labels: unknown }).labels, { app: 'x' });
    });

    it('returns undefined for a missing object', async () => {
      assert.equal(await s.objects.get(key('ns', 'missing')), undefined);
    });

    it('refuses a second create of the same key with AlreadyExists and consumes no revision', async () => {
      const before = await s.objects.currentRevision();
      await assert.rejects(s.objects.create(key('ns', 'a'), body('a')), isCode('AlreadyExists'));
      assert.equal(await s.objects.currentRevision(), before);
    });

    it('updates conditionally and rejects a stale revision with Conflict', async () => {
      const cur = (await s.objects.get(key('ns', 'a')))!;
      const updated = await s.objects.update(key('ns', 'a'), body('a', { app: 'y' }), cur.revision);
      assert.ok(updated.revision > cur.revision);
      await assert.rejects(s.objects.update(key('ns', 'a'), body('a', { app: 'z' }), cur.revision), isCode('Conflict'));
      const after = (await s.objects.get(key('ns', 'a')))!;
      assert.deepEqual((after.body.metadata as { labels: unknown }).labels, { app: 'y' });
    });

    it('updates unconditionally when no revision is expected', async () => {
      const up = await s.objects.update(key('ns', 'a'), body('a', { app: 'w' }), null);
      assert.equal((await s.objects.get(key('ns', 'a')))!.revision, up.revision);
    });

    it('deletes conditionally, rejecting a stale revision, and returns the last state', async () => {
      const c = await s.objects.create(key('ns', 'del'), body('del', {}, { k: 'v' }));
      await s.objects.update(key('ns', 'del'), body('del', {}, { k: 'v2' }), c.revision);
      await assert.rejects(s.objects.delete(key('ns', 'del'), c.revision), isCode('Conflict'));
      const gone = await s.objects.delete(key('ns', 'del'), null);
      assert.deepEqual(gone.body.data, { k: 'v2' });
      assert.equal(await s.objects.get(key('ns', 'del')), undefined);
      await assert.rejects(s.objects.delete(key('ns', 'del'), null), isCode('NotFound'));
    });

    it('lists at the newest revision in key order, with label selectors pushed to SQL', async () => {
      for (const n of ['l3', 'l1', 'l2']) await s.objects.create(key('ls', n), body(n, { tier: n === 'l2' ? 'back' : 'front' }));
      const all = await s.lists.list({ tenant: T, resource: R, namespace: 'ls' });
      assert.deepEqual(all.items.map((i) => i.key.name), ['l1', 'l2', 'l3']);
      assert.equal(all.revision, await s.objects.currentRevision());
      const front = await s.lists.list({ tenant: T, resource: R, namespace: 'ls', labelRequirements: [{ key: 'tier', operator: 'In', values: ['front'] }] });
      assert.deepEqual(front.items.map((i) => i.key.name), ['l1', 'l3']);
      const notFront = await s.lists.list({ tenant: T, resource: R, namespace: 'ls', labelRequirements: [{ key: 'tier', operator: 'NotEquals', values: ['front'] }] });
      assert.deepEqual(notFront.items.map((i) => i.key.name), ['l2']);
    });

    it('lists the state at a past revision, including objects since changed or deleted', async () => {
      const a = await s.objects.create(key('past', 'p1'), body('p1', {}, { v: '1' }));
      await s.objects.create(key('past', 'p2'), body('p2', {}, { v: '1' }));
      const snapshot = await s.objects.currentRevision();
      await s.objects.update(key('past', 'p1'), body('p1', {}, { v: '2' }), a.revision);
      await s.objects.delete(key('past', 'p2'), null);
      await s.objects.create(key('past', 'p3'), body('p3'));
      const then = await s.lists.list({ tenant: T, resource: R, namespace: 'past', atRevision: snapshot });
      assert.equal(then.revision, snapshot);
      assert.deepEqual(then.items.map((i) => [i.key.name, i.body.data]), [['p1', { v: '1' }], ['p2', { v: '1' }]]);
      const now = await s.lists.list({ tenant: T, resource: R, namespace: 'past' });
      assert.deepEqual(now.items.map((i) => [i.key.name, i.body.data]), [['p1', { v: '2' }], ['p3', {}]]);
    });

    it('pages with limit and a cursor over one snapshot, counting the remaining items', async () => {
      for (let i = 0; i < 7; i++) await s.objects.create(key('pg', `item-${i}`), body(`item-${i}`));
      const p1 = await s.lists.list({ tenant: T, resource: R, namespace: 'pg', limit: 3, countRemaining: true });
      assert.deepEqual(p1.items.map((i) => i.key.name), ['item-0', 'item-1', 'item-2']);
      assert.equal(p1.remaining, 4);
      await s.objects.delete(key('pg', 'item-4'), null);
      await s.objects.create(key('pg', 'item-9'), body('item-9'));
      const p2 = await s.lists.list({ tenant: T, resource: R, namespace: 'pg', limit: 3, after: p1.next, atRevision: p1.revision, countRemaining: true });
      assert.deepEqual(p2.items.map((i) => i.key.name), ['item-3', 'item-4', 'item-5']);
      assert.equal(p2.revision, p1.revision);
      const p3 = await s.lists.list({ tenant: T, resource: R, namespace: 'pg', limit: 3, after: p2.next, atRevision: p1.revision });
      assert.deepEqual(p3.items.map((i) => i.key.name), ['item-6']);
      assert.equal(p3.next, undefined);
    });

    it('rejects a list at a revision newer than the newest with TooLargeResourceVersion', async () => {
      const cur = await s.objects.currentRevision();
      await assert.rejects(s.lists.list({ tenant: T, resource: R, atRevision: cur + 100 }), isCode('TooLargeResourceVersion'));
    });

    it('follows the history from a revision: every later change once, in order, with previous states', async () => {
      const from = await s.objects.currentRevision();
      const c = await s.objects.create(key('fl', 'f'), body('f', {}, { n: '1' }));
      const u = await s.objects.update(key('fl', 'f'), body('f', {}, { n: '2' }), c.revision);
      const d = await s.objects.delete(key('fl', 'f'), u.revision);
      const evs = await s.changesSince(from);
      assert.deepEqual(evs.map((e) => [e.revision, e.type]), [[c.revision, 'ADDED'], [u.revision, 'MODIFIED'], [d.revision, 'DELETED']]);
      assert.deepEqual(evs[1].prevObject?.data, { n: '1' });
      assert.equal((evs[1].prevObject?.metadata as { resourceVersion: string }).resourceVersion, String(c.revision));
      assert.deepEqual(evs[2].object.data, { n: '2' });
      assert.deepEqual(await s.changesSince(d.revision), []);
    });

    it('watches a resource from a revision: each later change of it once, in order, and nothing of other resources or tenants', async () => {
      const from = await s.objects.currentRevision();
      const w = await s.watch(T, R, from);
      try {
        const c = await s.objects.create(key('wt', 'w'), body('w', {}, { n: '1' }));
        await s.objects.create({ tenant: T, resource: '/secrets', namespace: 'wt', name: 'w' }, body('w'));
        await s.objects.create({ tenant: 'elsewhere', resource: R, namespace: 'wt', name: 'w' }, body('w'));
        const u = await s.objects.update(key('wt', 'w'), body('w', {}, { n: '2' }), c.revision);
        const d = await s.objects.delete(key('wt', 'w'), u.revision);
        const evs = await w.take(3);
        assert.deepEqual(evs.map((e) => [e.revision, e.type, e.key.name]), [[c.revision, 'ADDED', 'w'], [u.revision, 'MODIFIED', 'w'], [d.revision, 'DELETED', 'w']]);
        assert.deepEqual(evs[1].object.data, { n: '2' });
        const marker = await s.objects.create(key('wt', 'marker'), body('marker'));
        assert.deepEqual((await w.take(1)).map((e) => e.revision), [marker.revision]);
        assert.deepEqual(w.pending(), []);
      } finally {
        w.stop();
      }
    });

    it('replays a watch from a past revision, then continues live without a gap or a repeat', async () => {
      const from = await s.objects.currentRevision();
      const first = await s.objects.create(key('rp', 'r1'), body('r1'));
      const second = await s.objects.create(key('rp', 'r2'), body('r2'));
      const w = await s.watch(T, R, from);
      try {
        const third = await s.objects.create(key('rp', 'r3'), body('r3'));
        const evs = await w.take(3);
        assert.deepEqual(evs.map((e) => e.revision), [first.revision, second.revision, third.revision]);
      } finally {
        w.stop();
      }
    });

    it('compacts old changes and then answers Expired for lists, history and watches below the compacted revision', async () => {
      const c = await s.objects.create(key('cp', 'x'), body('x'));
      await s.objects.update(key('cp', 'x'), body('x', { a: 'b' }), c.revision);
      const n = await s.changes.compact(new Date(Date.now() + 60_000), 100000);
      assert.ok(n > 0);
      const compacted = await s.changes.compactedRevision();
      assert.ok(compacted >= c.revision);
      // Writes that push the compacted changes out of any window that still holds them.
      for (let i = 0; i < s.windowSize; i++) await s.objects.create(key('cp-fill', `f${i}`), body(`f${i}`));
      await assert.rejects(s.changesSince(c.revision - 1), isCode('Expired'));
      await assert.rejects(s.watch(T, R, c.revision - 1), isCode('Expired'));
      await assert.rejects(s.lists.list({ tenant: T, resource: R, atRevision: c.revision - 1 }), isCode('Expired'));
      const latest = await s.lists.list({ tenant: T, resource: R, namespace: 'cp' });
      assert.deepEqual(latest.items.map((i) => i.key.name), ['x']);
    });

    it('keeps tenants apart: the same key in two tenants is two objects', async () => {
      await s.objects.create({ tenant: 'other', resource: R, namespace: 'ns', name: 'a' }, body('a', { t: 'other' }));
      const mine = (await s.objects.get(key('ns', 'a')))!;
      const theirs = (await s.objects.get({ tenant: 'other', resource: R, namespace: 'ns', name: 'a' }))!;
      assert.notDeepEqual((mine.body.metadata as { labels: unknown }).labels, { t: 'other' });
      assert.deepEqual((theirs.body.metadata as { labels: unknown }).labels, { t: 'other' });
      const listed = await s.lists.list({ tenant: 'other', resource: R });
      assert.deepEqual(listed.items.map((i) => i.key.tenant), ['other']);
    });
  });
}
