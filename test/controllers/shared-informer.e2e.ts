import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { type CachedChange, type ChangeObserver, type Storage, STORAGE, TenantRepository } from '@plinth/storage';
import { ControllerManager } from '../../apps/api/src/controllers/controller-manager.js';
import { InformerController, type KeySource, onInformer } from '../../apps/api/src/controllers/informer-controller.js';
import {
  type InformerEvent,
  type InformerSource,
  NAMESPACE_INDEX,
  namespaceIndexValue,
  OWNER_UID_INDEX,
  SharedInformer,
} from '../../apps/api/src/controllers/shared-informer.js';
import { SharedInformerFactory } from '../../apps/api/src/controllers/shared-informer-factory.js';
import { OBSERVE_CHANGES, type ObserveChanges } from '../../apps/api/src/watch/observe-changes.js';
import { pino } from 'pino';
import { eventually } from '../support/eventually.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

/**
 * The server's change feed, passed through, that a test can cut: while cut,
 * changes are lost (as in a hole of the feed); `restore` then resets every
 * observer, as the watch cache does after a hole (the change stream's 410).
 */
class CuttableFeed {
  private cut = false;
  private readonly observers = new Set<ChangeObserver>();

  constructor(private readonly observe: ObserveChanges) {}

  readonly follow = (resource: string, observer: ChangeObserver): (() => void) => {
    this.observers.add(observer);
    const stop = this.observe(resource, {
      onChange: (c: CachedChange) => {
        if (!this.cut) observer.onChange(c);
      },
      onReset: () => observer.onReset(),
      onTenantRetired: (t) => observer.onTenantRetired?.(t),
    });
    return () => {
      this.observers.delete(observer);
      stop();
    };
  };

  sever(): void {
    this.cut = true;
  }

  restore(): void {
    this.cut = false;
    for (const o of this.observers) o.onReset();
  }
}

const NS = (tenant: string, ns: string) => `${tenant === 'default' ? '' : `/clusters/${tenant}`}/api/v1/namespaces/${ns}/configmaps`;
const LABEL = { informer: 'test' };

describe('shared informer (list-watch into a cache, over the real change feed)', { timeout: 150_000 }, () => {
  let s: TestServer;
  let storage: Storage;
  let feed: CuttableFeed;
  let source: InformerSource & { listCalls: number };
  const api = () => request(s.url);
  const logger = pino({ level: 'silent' });

  /** Every test ConfigMap (labelled) of `tenant` as storage has it: name → resourceVersion. */
  async function stored(tenant: string): Promise<Map<string, number>> {
    const page = await storage.list({ tenant, resource: 'configmaps' });
    return new Map(
      page.items.filter((i) => (i.body.metadata as { labels?: Record<string, string> }).labels?.informer === 'test').map((i) => [`${i.key.namespace}/${i.key.name}`, i.revision]),
    );
  }

  /** The same from the informer's cache. */
  function cached(informer: SharedInformer, tenant: string): Map<string, number> {
    return new Map(
      informer
        .list(tenant)
        .filter((o) => (o.body.metadata as { labels?: Record<string, string> }).labels?.informer === 'test')
        .map((o) => [`${o.key.namespace}/${o.key.name}`, o.revision]),
    );
  }

  async function createCm(tenant: string, ns: string, name: string, extra: Record<string, unknown> = {}): Promise<Record<string, any>> {
    return (await api().post(NS(tenant, ns)).send({ metadata: { name, labels: LABEL, ...extra }, data: { v: '1' } }).expect(201)).body;
  }

  before(async () => {
    s = await startTestServer('shared-informer', { PLINTH_TENANTS: 'acme' });
    storage = s.app.get<Storage>(STORAGE);
    feed = new CuttableFeed(s.app.get<ObserveChanges>(OBSERVE_CHANGES));
    const tenants = s.app.get(TenantRepository);
    source = {
      listCalls: 0,
      list: (q) => {
        source.listCalls++;
        return storage.list(q);
      },
      tenants: () => tenants.list(),
      follow: feed.follow,
    };
    await api().post('/clusters/acme/api/v1/namespaces').send({ metadata: { name: 'inf' } }).expect(201);
    await createCm('default', 'default', 'before-a');
    await createCm('acme', 'inf', 'before-b');
  });
  after(async () => s?.close());

  it('lists every tenant into the cache, then follows adds, updates and deletes from the list revision', async () => {
    const informer = new SharedInformer({ resource: 'configmaps' }, source, logger);
    const events: InformerEvent[] = [];
    informer.addEventHandler((e) => events.push(e));
    informer.acquire();
    await informer.whenSynced();
    assert.equal(informer.hasSynced(), true);
    assert.deepEqual(cached(informer, 'default'), await stored('default'));
    assert.deepEqual(cached(informer, 'acme'), await stored('acme'));
    assert.ok(informer.get('acme', 'inf', 'before-b'), 'the other tenant is listed too');
    assert.ok(events.some((e) => e.type === 'add' && e.object.key.name === 'before-a'), 'the list is told as adds');

    const made = await createCm('acme', 'inf', 'live');
    await api().patch(`${NS('acme', 'inf')}/live`).set('Content-Type', 'application/merge-patch+json').send({ data: { v: '2' } }).expect(200);
    await api().delete(`${NS('default', 'default')}/before-a`).expect(200);
    await eventually(() => informer.get('default', 'default', 'before-a') === undefined && (informer.get('acme', 'inf', 'live')?.body.data as { v?: string })?.v === '2', {
      message: 'the cache follows the changes',
    });
    const live = events.filter((e) => e.object.key.name === 'live').map((e) => e.type);
    assert.deepEqual(live, ['add', 'update'], 'each change once, in order');
    const upd = events.find((e) => e.object.key.name === 'live' && e.type === 'update')!;
    assert.equal(upd.old?.revision, Number(made.metadata.resourceVersion));
    assert.deepEqual(events.filter((e) => e.object.key.name === 'before-a').map((e) => e.type), ['add', 'delete']);
    assert.deepEqual(cached(informer, 'acme'), await stored('acme'));
    await informer.release();
    assert.equal(informer.hasSynced(), false);
    assert.equal(informer.size, 0, 'the last release empties the cache');
  });

  it('loses and repeats nothing of the changes made while it lists', async () => {
    const observe = s.app.get<ObserveChanges>(OBSERVE_CHANGES);
    /** Writes a ConfigMap and changes it, and returns once the feed has delivered the change (it is then held by the listing informer). */
    async function writeAndAwaitFeed(name: string): Promise<void> {
      let seen = 0;
      const stop = observe('configmaps', { onChange: (c) => void (c.key.name === name && (seen = c.revision)), onReset: () => undefined });
      try {
        await createCm('acme', 'inf', name);
        const patched = (await api().patch(`${NS('acme', 'inf')}/${name}`).set('Content-Type', 'application/merge-patch+json').send({ data: { v: '2' } }).expect(200)).body;
        await eventually(() => seen >= Number(patched.metadata.resourceVersion), { message: `the feed delivered ${name}` });
      } finally {
        stop();
      }
    }
    let pages = 0;
    const slow: InformerSource = {
      ...source,
      pageSize: 3,
      list: async (q) => {
        pages++;
        // Before the first page: changes the list will hold, which the feed also delivers (held meanwhile: dropped).
        if (pages === 1) for (const n of ['pre-1', 'pre-2']) await writeAndAwaitFeed(n);
        const page = await storage.list(q);
        // Between pages (the list stays at the first page's revision): changes it will not hold (held: applied).
        if (pages === 2) for (const n of ['mid-1', 'mid-2']) await writeAndAwaitFeed(n);
        return page;
      },
    };
    const informer = new SharedInformer({ resource: 'configmaps', tenant: 'acme' }, slow, logger);
    const seen = new Map<string, number[]>();
    informer.addEventHandler((e) => {
      if (e.type === 'delete') return;
      const id = `${e.object.key.namespace}/${e.object.key.name}`;
      seen.set(id, [...(seen.get(id) ?? []), e.object.revision]);
    });
    informer.acquire();
    await informer.whenSynced();
    assert.ok(pages >= 2, 'the list took several pages');
    assert.deepEqual(cached(informer, 'acme'), await stored('acme'), 'the cache is what storage holds');
    for (const [id, revisions] of seen) {
      assert.deepEqual(revisions, [...new Set(revisions)].sort((a, b) => a - b), `${id}: each state once, in order (${revisions.join()})`);
    }
    // Listed at their newest state (one add each); the changes made after the list's revision arrive from the feed (add, update).
    assert.equal(seen.get('inf/pre-1')?.length, 1);
    assert.equal(seen.get('inf/mid-1')?.length, 2);
    for (const n of ['pre-1', 'pre-2', 'mid-1', 'mid-2']) assert.equal((informer.get('acme', 'inf', n)?.body.data as { v?: string })?.v, '2', n);
    await informer.release();
  });

  it('starts a list over when a later page meets a compacted revision (410 Expired from storage)', async () => {
    let compacted = false;
    const paged: InformerSource = {
      ...source,
      pageSize: 2,
      list: async (q) => {
        // Between the first and the second page: writes, then compaction of every change but the newest, past the first page's revision.
        if (q.after && !compacted) {
          compacted = true;
          await createCm('acme', 'inf', 'compacted-away');
          await createCm('acme', 'inf', 'newest');
          while ((await storage.compact(new Date(Date.now() + 60_000), 10_000)) > 0);
        }
        return storage.list(q);
      },
    };
    const informer = new SharedInformer({ resource: 'configmaps', tenant: 'acme' }, paged, logger);
    informer.acquire();
    await informer.whenSynced();
    assert.equal(compacted, true);
    assert.equal(informer.expiredLists, 1, 'the second page was refused as Expired, and the list started over');
    assert.deepEqual(cached(informer, 'acme'), await stored('acme'));
    assert.ok(informer.get('acme', 'inf', 'compacted-away'), 'the list that started over has the write');
    await informer.release();
  });

  it('answers its indexes: by namespace and by owner uid, kept current on updates', async () => {
    const informer = new SharedInformer({ resource: 'configmaps', tenant: 'acme' }, source, logger, {
      byData: (o) => [String((o.body.data as { v?: string } | undefined)?.v ?? '')],
    });
    informer.acquire();
    await informer.whenSynced();
    // Real owners (the garbage collector deletes a dependent whose owners do not exist).
    const owner1 = (await createCm('acme', 'inf', 'owner-1')).metadata.uid as string;
    const owner2 = (await createCm('acme', 'inf', 'owner-2')).metadata.uid as string;
    await createCm('acme', 'inf', 'owned', { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner-1', uid: owner1 }] });
    await eventually(() => informer.byIndex(OWNER_UID_INDEX, owner1).length === 1, { message: 'indexed by owner' });
    assert.deepEqual(informer.byIndex(OWNER_UID_INDEX, owner1).map((o) => o.key.name), ['owned']);
    const inNs = informer.byIndex(NAMESPACE_INDEX, namespaceIndexValue('acme', 'inf')).map((o) => o.key.name).sort();
    assert.ok(inNs.includes('owned') && inNs.includes('before-b'), inNs.join());
    assert.equal(informer.byIndex(NAMESPACE_INDEX, namespaceIndexValue('default', 'default')).length, 0, 'a tenant-scoped informer holds one tenant');
    await api()
      .patch(`${NS('acme', 'inf')}/owned`)
      .set('Content-Type', 'application/merge-patch+json')
      .send({ metadata: { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner-2', uid: owner2 }] }, data: { v: 'seven' } })
      .expect(200);
    await eventually(() => informer.byIndex(OWNER_UID_INDEX, owner2).length === 1, { message: 'reindexed' });
    assert.equal(informer.byIndex(OWNER_UID_INDEX, owner1).length, 0, 'the old value no longer answers');
    assert.deepEqual(informer.byIndex('byData', 'seven').map((o) => o.key.name), ['owned']);
    assert.throws(() => informer.byIndex('nope', 'x'), /no index "nope"/);
    await informer.release();
  });

  it('re-delivers every cached object to a handler with a resync period, as updates of the same state', async () => {
    const informer = new SharedInformer({ resource: 'configmaps', tenant: 'acme' }, source, logger);
    informer.acquire();
    await informer.whenSynced();
    const resynced = new Set<string>();
    const remove = informer.addEventHandler(
      (e) => {
        if (e.type === 'update' && e.old === e.object) resynced.add(`${e.object.key.namespace}/${e.object.key.name}`);
      },
      { resyncPeriodMs: 100 },
    );
    await eventually(() => resynced.size === informer.size, { message: 'every object re-delivered' });
    assert.ok(resynced.has('inf/before-b'));
    remove();
    await informer.release();
  });

  it('relists after a hole in the feed (410 Expired): nothing lost, nothing repeated', async () => {
    const informer = new SharedInformer({ resource: 'configmaps' }, source, logger);
    informer.acquire();
    await informer.whenSynced();
    await createCm('acme', 'inf', 'keeps');
    await createCm('acme', 'inf', 'goes');
    await eventually(() => informer.get('acme', 'inf', 'goes') !== undefined);
    const events: InformerEvent[] = [];
    informer.addEventHandler((e) => {
      if (!(e.type === 'update' && e.old?.revision === e.object.revision)) events.push(e);
    });
    events.length = 0;
    const listsBefore = informer.lists;

    feed.sever();
    await createCm('acme', 'inf', 'born-in-hole');
    await api().patch(`${NS('acme', 'inf')}/keeps`).set('Content-Type', 'application/merge-patch+json').send({ data: { v: 'hole' } }).expect(200);
    await api().delete(`${NS('acme', 'inf')}/goes`).expect(200);
    // Nothing of the hole reached the cache.
    assert.ok(informer.get('acme', 'inf', 'goes'));
    assert.equal(informer.get('acme', 'inf', 'born-in-hole'), undefined);
    feed.restore();

    await eventually(() => informer.lists === listsBefore + 1 && informer.get('acme', 'inf', 'goes') === undefined, { message: 'relisted' });
    assert.deepEqual(cached(informer, 'acme'), await stored('acme'), 'the cache is what storage holds');
    assert.deepEqual(cached(informer, 'default'), await stored('default'));
    const summary = events.map((e) => `${e.type}:${e.object.key.name}`).sort();
    assert.deepEqual(summary, ['add:born-in-hole', 'delete:goes', 'update:keeps'], 'each difference told once');
    assert.equal((informer.get('acme', 'inf', 'keeps')!.body.data as { v: string }).v, 'hole');

    // Following resumes where the list stands: the next change arrives once.
    events.length = 0;
    await api().patch(`${NS('acme', 'inf')}/keeps`).set('Content-Type', 'application/merge-patch+json').send({ data: { v: 'after' } }).expect(200);
    await eventually(() => (informer.get('acme', 'inf', 'keeps')!.body.data as { v: string }).v === 'after');
    assert.deepEqual(events.map((e) => `${e.type}:${e.object.key.name}`), ['update:keeps']);
    await informer.release();
  });

  it('is shared: two controllers get one informer, listed once, and reconcile from its cache', async () => {
    const factory = new SharedInformerFactory(source, logger);
    const manager = s.app.get(ControllerManager);
    const seen = new Map<string, Array<string | undefined>>();

    class Recorder extends InformerController {
      constructor(
        name: string,
        private readonly informer: SharedInformer,
      ) {
        super({ name, workers: 1, queues: manager });
        seen.set(name, []);
      }
      protected sources(): KeySource[] {
        return [onInformer(this.informer, (e) => (e.type === 'delete' || e.object.key.tenant !== 'acme' ? undefined : `${e.object.key.namespace}/${e.object.key.name}`))];
      }
      protected async reconcile(key: string): Promise<void> {
        const [ns, name] = key.split('/');
        // What the controller reads is the cache: the state the event carried, not a read of storage.
        seen.get(this.name)!.push((this.informer.get('acme', ns, name)?.body.data as { v?: string } | undefined)?.v);
      }
    }

    const one = factory.informerFor({ resource: 'configmaps' });
    assert.equal(factory.informerFor({ resource: 'configmaps' }), one, 'one informer per scope');
    assert.notEqual(factory.informerFor({ resource: 'configmaps', tenant: 'acme' }), one, 'another scope, another informer');
    const a = new Recorder('test-recorder-a', one);
    const b = new Recorder('test-recorder-b', factory.informerFor({ resource: 'configmaps' }));
    const listsBefore = source.listCalls;
    const tenantsListed = (await s.app.get(TenantRepository).list()).length;
    a.start();
    b.start();
    await one.whenSynced();
    assert.equal(one.lists, 1, 'one list for both');
    assert.equal(one.holders, 2);
    assert.equal(source.listCalls - listsBefore, tenantsListed, `one list call per tenant (${tenantsListed}), not per controller`);

    await createCm('acme', 'inf', 'shared', {});
    await api().patch(`${NS('acme', 'inf')}/shared`).set('Content-Type', 'application/merge-patch+json').send({ data: { v: 'cached' } }).expect(200);
    await eventually(() => seen.get('test-recorder-a')!.includes('cached') && seen.get('test-recorder-b')!.includes('cached'), { message: 'both reconciled the change' });

    await a.stop();
    assert.equal(one.holders, 1, 'still held by the other');
    assert.equal(one.hasSynced(), true);
    await b.stop();
    assert.equal(one.holders, 0);
    assert.equal(one.hasSynced(), false, 'the last controller stopped it');
  });

  it("serves the server's own controllers: the namespace controller and the root CA publisher share the namespaces informer, the tenant controller, the mover and the restorer of Tenant.spec.source the Tenants'", async () => {
    const factory = s.app.get(SharedInformerFactory);
    const namespaces = factory.informerFor({ resource: 'namespaces' });
    assert.equal(namespaces.holders, 2);
    await namespaces.whenSynced();
    assert.ok(namespaces.get('acme', '', 'inf'), 'it caches every tenant');
    const tenants = factory.all().find((i) => i.scope.resource === 'tenancy.plinth.dev/tenants');
    // The snapshot scheduler is a fourth holder when a snapshot target is configured (none here).
    assert.equal(tenants?.holders, 3);
    assert.equal(tenants?.scope.tenant, 'default');
  });
});
