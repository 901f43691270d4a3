import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { createDatabase, type DB, type Storage, StorageError, TenantRepository } from '@plinth/storage';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';
import { ChangeCollector, type ConformanceStorageFactory, type ConformanceTarget } from './conformance-storage.js';

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
 * the library's Storage interface: create, get, list at the newest and at a
 * past revision, paging, streamed lists, conditional update and delete,
 * guaranteed updates, history replay, live watches from a revision,
 * compaction and tenants. Runs against whatever `factory` builds, so the
 * same assertions hold for the PostgreSQL store and for the store read
 * through a replica's watch cache (fed by LISTEN or by Redis).
 */
export function describeStorageConformance(label: string, factory: ConformanceStorageFactory): void {
  describe(`storage conformance (${label})`, () => {
    let tdb: TestDatabase;
    let db: Kysely<DB>;
    let t: ConformanceTarget;
    let s: Storage;
    const watch = (tenant: string, resource: string, from: number) => ChangeCollector.open(s, { tenant, resource }, from);

    before(async () => {
      tdb = await createTestDatabase('conformance');
      db = createDatabase({ connectionString: tdb.url });
      t = await factory(db, tdb.url);
      s = t.storage;
      // Storage accepts objects only of tenants that exist (and are Active).
      for (const t of ['other', 'elsewhere']) await new TenantRepository(db).ensure(t);
    });
    after(async () => {
      await t?.close();
      await db?.destroy();
      await tdb?.drop();
    });

    it('creates an object and reads it back with its revision as resourceVersion', async () => {
      const created = await s.create(key('ns', 'a'), body('a', { app: 'x' }));
      const got = await s.get(key('ns', 'a'));
      assert.ok(got);
      assert.equal(got.revision, created.revision);
      assert.equal((got.body.metadata as { resourceVersion: string }).resourceVersion, String(created.revision));
      assert.deepEqual((got.body.metadata as { labels: unknown }).labels, { app: 'x' });
    });

    it('returns undefined for a missing object', async () => {
      assert.equal(await s.get(key('ns', 'missing')), undefined);
    });

    it('refuses a second create of the same key with AlreadyExists and consumes no revision', async () => {
      const before = await s.currentRevision();
      await assert.rejects(s.create(key('ns', 'a'), body('a')), isCode('AlreadyExists'));
      assert.equal(await s.currentRevision(), before);
    });

    it('updates conditionally and rejects a stale revision with Conflict', async () => {
      const cur = (await s.get(key('ns', 'a')))!;
      const updated = await s.update(key('ns', 'a'), body('a', { app: 'y' }), cur.revision);
      assert.ok(updated.revision > cur.revision);
      await assert.rejects(s.update(key('ns', 'a'), body('a', { app: 'z' }), cur.revision), isCode('Conflict'));
      const after = (await s.get(key('ns', 'a')))!;
      assert.deepEqual((after.body.metadata as { labels: unknown }).labels, { app: 'y' });
    });

    it('updates unconditionally when no revision is expected', async () => {
      const up = await s.update(key('ns', 'a'), body('a', { app: 'w' }), null);
      assert.equal((await s.get(key('ns', 'a')))!.revision, up.revision);
    });

    it('deletes conditionally, rejecting a stale revision, and returns the last state', async () => {
      const c = await s.create(key('ns', 'del'), body('del', {}, { k: 'v' }));
      await s.update(key('ns', 'del'), body('del', {}, { k: 'v2' }), c.revision);
      await assert.rejects(s.delete(key('ns', 'del'), c.revision), isCode('Conflict'));
      const gone = await s.delete(key('ns', 'del'), null);
      assert.deepEqual(gone.body.data, { k: 'v2' });
      assert.equal(await s.get(key('ns', 'del')), undefined);
      await assert.rejects(s.delete(key('ns', 'del'), null), isCode('NotFound'));
    });

    it('lists at the newest revision in key order, with label selectors pushed to SQL', async () => {
      for (const n of ['l3', 'l1', 'l2']) await s.create(key('ls', n), body(n, { tier: n === 'l2' ? 'back' : 'front' }));
      const all = await s.list({ tenant: T, resource: R, namespace: 'ls' });
      assert.deepEqual(all.items.map((i) => i.key.name), ['l1', 'l2', 'l3']);
      assert.equal(all.revision, await s.currentRevision());
      const front = await s.list({ tenant: T, resource: R, namespace: 'ls', labelRequirements: [{ key: 'tier', operator: 'In', values: ['front'] }] });
      assert.deepEqual(front.items.map((i) => i.key.name), ['l1', 'l3']);
      const notFront = await s.list({ tenant: T, resource: R, namespace: 'ls', labelRequirements: [{ key: 'tier', operator: 'NotEquals', values: ['front'] }] });
      assert.deepEqual(notFront.items.map((i) => i.key.name), ['l2']);
    });

    it('lists the state at a past revision, including objects since changed or deleted', async () => {
      const a = await s.create(key('past', 'p1'), body('p1', {}, { v: '1' }));
      await s.create(key('past', 'p2'), body('p2', {}, { v: '1' }));
      const snapshot = await s.currentRevision();
      await s.update(key('past', 'p1'), body('p1', {}, { v: '2' }), a.revision);
      await s.delete(key('past', 'p2'), null);
      await s.create(key('past', 'p3'), body('p3'));
      const then = await s.list({ tenant: T, resource: R, namespace: 'past', atRevision: snapshot });
      assert.equal(then.revision, snapshot);
      assert.deepEqual(then.items.map((i) => [i.key.name, i.body.data]), [['p1', { v: '1' }], ['p2', { v: '1' }]]);
      const now = await s.list({ tenant: T, resource: R, namespace: 'past' });
      assert.deepEqual(now.items.map((i) => [i.key.name, i.body.data]), [['p1', { v: '2' }], ['p3', {}]]);
    });

    it('pages with limit and a cursor over one snapshot, counting the remaining items', async () => {
      for (let i = 0; i < 7; i++) await s.create(key('pg', `item-${i}`), body(`item-${i}`));
      const p1 = await s.list({ tenant: T, resource: R, namespace: 'pg', limit: 3, countRemaining: true });
      assert.deepEqual(p1.items.map((i) => i.key.name), ['item-0', 'item-1', 'item-2']);
      assert.equal(p1.remaining, 4);
      await s.delete(key('pg', 'item-4'), null);
      await s.create(key('pg', 'item-9'), body('item-9'));
      const p2 = await s.list({ tenant: T, resource: R, namespace: 'pg', limit: 3, after: p1.next, atRevision: p1.revision, countRemaining: true });
      assert.deepEqual(p2.items.map((i) => i.key.name), ['item-3', 'item-4', 'item-5']);
      assert.equal(p2.revision, p1.revision);
      const p3 = await s.list({ tenant: T, resource: R, namespace: 'pg', limit: 3, after: p2.next, atRevision: p1.revision });
      assert.deepEqual(p3.items.map((i) => i.key.name), ['item-6']);
      assert.equal(p3.next, undefined);
    });

    it('rejects a list at a revision newer than the newest with TooLargeResourceVersion', async () => {
      const cur = await s.currentRevision();
      await assert.rejects(s.list({ tenant: T, resource: R, atRevision: cur + 100 }), isCode('TooLargeResourceVersion'));
    });

    it('replays the history from a revision: every later change once, in order, with previous states', async () => {
      const from = await s.currentRevision();
      const c = await s.create(key('fl', 'f'), body('f', {}, { n: '1' }));
      const u = await s.update(key('fl', 'f'), body('f', {}, { n: '2' }), c.revision);
      const d = await s.delete(key('fl', 'f'), u.revision);
      const w = await watch(T, R, from);
      try {
        const evs = await w.take(3);
        assert.deepEqual(evs.map((e) => [e.revision, e.type]), [[c.revision, 'ADDED'], [u.revision, 'MODIFIED'], [d.revision, 'DELETED']]);
        assert.deepEqual(evs[1].prevObject?.data, { n: '1' });
        assert.equal((evs[1].prevObject?.metadata as { resourceVersion: string }).resourceVersion, String(c.revision));
        assert.deepEqual(evs[2].object.data, { n: '2' });
      } finally {
        w.stop();
      }
      const after = await watch(T, R, d.revision);
      try {
        await new Promise((r) => setTimeout(r, 100));
        assert.deepEqual(after.pending(), []);
      } finally {
        after.stop();
      }
    });

    it('watches one namespace or one object when the scope names them', async () => {
      const from = await s.currentRevision();
      const w = await ChangeCollector.open(s, { tenant: T, resource: R, namespace: 'sc', name: 'one' }, from);
      try {
        await s.create(key('sc', 'two'), body('two'));
        await s.create(key('sc-other', 'one'), body('one'));
        const one = await s.create(key('sc', 'one'), body('one'));
        assert.deepEqual((await w.take(1)).map((e) => [e.revision, e.key.namespace, e.key.name]), [[one.revision, 'sc', 'one']]);
        assert.deepEqual(w.pending(), []);
      } finally {
        w.stop();
      }
    });

    it('updates with guaranteedUpdate: retries on a conflicting write, keeps preconditions, changes nothing when asked to', async () => {
      const c = await s.create(key('gu', 'g'), body('g', {}, { n: '0' }));
      let calls = 0;
      const bumped = await s.guaranteedUpdate(key('gu', 'g'), async (cur) => {
        calls++;
        // The first attempt races a write: the storage must read again and retry, not fail or overwrite it.
        if (calls === 1) await s.update(key('gu', 'g'), body('g', {}, { n: '1', racer: 'yes' }), cur.revision);
        return { ...cur.body, data: { ...(cur.body.data as Record<string, string>), n: String(Number((cur.body.data as { n: string }).n) + 1) } };
      });
      assert.equal(calls, 2);
      assert.deepEqual(bumped.body.data, { n: '2', racer: 'yes' });
      assert.deepEqual((await s.get(key('gu', 'g')))!.body.data, { n: '2', racer: 'yes' });
      await assert.rejects(s.guaranteedUpdate(key('gu', 'g'), (cur) => cur.body, { expectedRevision: c.revision }), isCode('Conflict'));
      const same = await s.guaranteedUpdate(key('gu', 'g'), () => undefined);
      assert.equal(same.revision, bumped.revision);
      assert.equal(await s.currentRevision() >= bumped.revision, true);
      // A stale cached state is read afresh on the conflict it causes.
      const stale = await s.guaranteedUpdate(key('gu', 'g'), (cur) => ({ ...cur.body, data: { n: 'cached' } }), { cached: c });
      assert.ok(stale.revision > bumped.revision);
      await assert.rejects(s.guaranteedUpdate(key('gu', 'missing'), (cur) => cur.body), isCode('NotFound'));
    });

    it('streams a list in chunks of one snapshot, equal to the list', async () => {
      for (let i = 0; i < 9; i++) await s.create(key('st', `s-${i}`), body(`s-${i}`, {}, { pad: 'x'.repeat(200) }));
      const listed = await s.list({ tenant: T, resource: R, namespace: 'st' });
      const chunks = [];
      for await (const chunk of s.stream({ tenant: T, resource: R, namespace: 'st' }, { firstRows: 2, firstBytes: 600, bytes: 600, maxRows: 3 })) {
        chunks.push(chunk);
        // Writes between chunks do not show in the rest of the stream.
        if (chunks.length === 1) await s.create(key('st', 's-8a'), body('s-8a'));
      }
      assert.ok(chunks.length > 2, `${chunks.length} chunks`);
      assert.deepEqual(new Set(chunks.map((c) => c.revision)), new Set([listed.revision]));
      assert.deepEqual(chunks.flatMap((c) => c.items.map((i) => i.key.name)), listed.items.map((i) => i.key.name));
    });

    it('watches a resource from a revision: each later change of it once, in order, and nothing of other resources or tenants', async () => {
      const from = await s.currentRevision();
      const w = await watch(T, R, from);
      try {
        const c = await s.create(key('wt', 'w'), body('w', {}, { n: '1' }));
        await s.create({ tenant: T, resource: '/secrets', namespace: 'wt', name: 'w' }, body('w'));
        await s.create({ tenant: 'elsewhere', resource: R, namespace: 'wt', name: 'w' }, body('w'));
        const u = await s.update(key('wt', 'w'), body('w', {}, { n: '2' }), c.revision);
        const d = await s.delete(key('wt', 'w'), u.revision);
        const evs = await w.take(3);
        assert.deepEqual(evs.map((e) => [e.revision, e.type, e.key.name]), [[c.revision, 'ADDED', 'w'], [u.revision, 'MODIFIED', 'w'], [d.revision, 'DELETED', 'w']]);
        assert.deepEqual(evs[1].object.data, { n: '2' });
        const marker = await s.create(key('wt', 'marker'), body('marker'));
        assert.deepEqual((await w.take(1)).map((e) => e.revision), [marker.revision]);
        assert.deepEqual(w.pending(), []);
      } finally {
        w.stop();
      }
    });

    it('replays a watch from a past revision, then continues live without a gap or a repeat', async () => {
      const from = await s.currentRevision();
      const first = await s.create(key('rp', 'r1'), body('r1'));
      const second = await s.create(key('rp', 'r2'), body('r2'));
      const w = await watch(T, R, from);
      try {
        const third = await s.create(key('rp', 'r3'), body('r3'));
        const evs = await w.take(3);
        assert.deepEqual(evs.map((e) => e.revision), [first.revision, second.revision, third.revision]);
      } finally {
        w.stop();
      }
    });

    it('compacts old changes and then answers Expired for lists, history and watches below the compacted revision', async () => {
      const c = await s.create(key('cp', 'x'), body('x'));
      await s.update(key('cp', 'x'), body('x', { a: 'b' }), c.revision);
      const n = await s.compact(new Date(Date.now() + 60_000), 100000);
      assert.ok(n > 0);
      const compacted = await s.compactedRevision();
      assert.ok(compacted >= c.revision);
      // Writes that push the compacted changes out of any window that still holds them.
      for (let i = 0; i < t.windowSize; i++) await s.create(key('cp-fill', `f${i}`), body(`f${i}`));
      await t.settle();
      await assert.rejects(ChangeCollector.open(s, { tenant: T, resource: R, namespace: 'cp' }, c.revision - 1), isCode('Expired'));
      await assert.rejects(watch(T, R, c.revision - 1), isCode('Expired'));
      await assert.rejects(s.list({ tenant: T, resource: R, atRevision: c.revision - 1 }), isCode('Expired'));
      const latest = await s.list({ tenant: T, resource: R, namespace: 'cp' });
      assert.deepEqual(latest.items.map((i) => i.key.name), ['x']);
    });

    it('keeps tenants apart: the same key in two tenants is two objects', async () => {
      await s.create({ tenant: 'other', resource: R, namespace: 'ns', name: 'a' }, body('a', { t: 'other' }));
      const mine = (await s.get(key('ns', 'a')))!;
      const theirs = (await s.get({ tenant: 'other', resource: R, namespace: 'ns', name: 'a' }))!;
      assert.notDeepEqual((mine.body.metadata as { labels: unknown }).labels, { t: 'other' });
      assert.deepEqual((theirs.body.metadata as { labels: unknown }).labels, { t: 'other' });
      const listed = await s.list({ tenant: 'other', resource: R });
      assert.deepEqual(listed.items.map((i) => i.key.tenant), ['other']);
    });
  });
}
