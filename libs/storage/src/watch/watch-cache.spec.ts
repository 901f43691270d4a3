import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ChangeEvent, ChangeLogRepository } from '../change-log.repository.js';
import { StorageError } from '../storage-error.js';
import { CacheFeeder } from './cache-feeder.js';
import { FanOutClock, type FanOutTiming } from './fan-out-clock.js';
import { type CachedChange, type CacheSubscriber, WatchCache } from './watch-cache.js';

const change = (revision: number, resource = 'configmaps', tenant = 'default'): ChangeEvent => ({
  revision,
  key: { tenant, resource, namespace: 'ns', name: `n${revision}` },
  type: 'ADDED',
  object: { metadata: { name: `n${revision}`, resourceVersion: String(revision) } },
  prevObject: null,
});

class Recorder implements CacheSubscriber {
  readonly seen: number[] = [];
  ended: string | undefined;
  constructor(
    readonly bucket: string,
    private readonly onEach?: (c: CachedChange) => void,
  ) {}
  onChange(c: CachedChange): void {
    this.seen.push(c.revision);
    this.onEach?.(c);
  }
  onEnd(reason: string): void {
    this.ended = reason;
  }
}

const silent = { info() {}, warn() {}, error() {} };

describe('WatchCache', () => {
  it('feeds observers every change of their resource in any tenant, before watchers, and tells them of resets', () => {
    const cache = new WatchCache(4);
    cache.reset(0);
    const order: string[] = [];
    let resets = 0;
    const stop = cache.observe('crds', { onChange: (c) => order.push(`observer ${c.key.tenant} ${c.revision}`), onReset: () => resets++ });
    cache.subscribe(new Recorder(WatchCache.bucketKey('a', 'crds'), (c) => order.push(`watcher ${c.revision}`)));
    cache.append(change(1, 'crds', 'a'));
    cache.append(change(2, 'configmaps', 'a'));
    cache.append(change(3, 'crds', 'b'));
    assert.deepEqual(order, ['observer a 1', 'watcher 1', 'observer b 3']);
    cache.reset(10);
    assert.equal(resets, 1);
    stop();
    cache.append(change(11, 'crds', 'a'));
    cache.reset(20);
    assert.equal(order.length, 3);
    assert.equal(resets, 1);
  });

  it('resolves whenApplied once the revision is appended or the cache restarts past it', async () => {
    const cache = new WatchCache(4);
    cache.reset(5);
    const done: number[] = [];
    await cache.whenApplied(5);
    void cache.whenApplied(7).then(() => done.push(7));
    void cache.whenApplied(30).then(() => done.push(30));
    cache.append(change(6));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(done, []);
    cache.append(change(7));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(done, [7]);
    cache.reset(40);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(done, [7, 30]);
  });

  it('keeps a window of the last `capacity` changes and answers since() inside it', () => {
    const cache = new WatchCache(3);
    cache.reset(10);
    for (let r = 11; r <= 15; r++) cache.append(change(r));
    assert.equal(cache.revision, 15);
    assert.equal(cache.oldestResumable, 12);
    assert.deepEqual(cache.since(12)!.map((c) => c.revision), [13, 14, 15]);
    assert.deepEqual(cache.since(14)!.map((c) => c.revision), [15]);
    assert.deepEqual(cache.since(15), []);
    assert.deepEqual(cache.since(99), []);
    assert.equal(cache.since(11), undefined);
    assert.throws(() => cache.append(change(15)), /not after/);
  });

  it('feeds subscribers of the change’s tenant and resource only, and tolerates unsubscribing during dispatch', () => {
    const cache = new WatchCache(10);
    cache.reset(0);
    const cms = new Recorder(WatchCache.bucketKey('default', 'configmaps'));
    const other = new Recorder(WatchCache.bucketKey('acme', 'configmaps'));
    const once: Recorder = new Recorder(WatchCache.bucketKey('default', 'configmaps'), () => cache.unsubscribe(once));
    for (const s of [cms, other, once]) cache.subscribe(s);
    cache.append(change(1));
    cache.append(change(2, 'secrets'));
    cache.append(change(3, 'configmaps', 'acme'));
    cache.append(change(4));
    assert.deepEqual(cms.seen, [1, 4]);
    assert.deepEqual(other.seen, [3]);
    assert.deepEqual(once.seen, [1]);
    assert.equal(cache.subscriberCount, 2);
    cache.reset(100, 'gone');
    assert.equal(cms.ended, 'gone');
    assert.equal(cache.subscriberCount, 0);
    assert.equal(cache.oldestResumable, 100);
  });
});

describe('CacheFeeder', () => {
  const log = (upTo: number, compacted = 0): Pick<ChangeLogRepository, 'changesAfter'> => ({
    async changesAfter(after: number, limit: number) {
      if (after < compacted) throw new StorageError('Expired', `too old resource version: ${after} (${compacted})`);
      const out: ChangeEvent[] = [];
      for (let r = after + 1; r <= upTo && out.length < limit; r++) out.push(change(r));
      return out;
    },
  });

  it('drops repeats and fills holes in the stream from the change log', async () => {
    const cache = new WatchCache(100);
    cache.reset(5);
    let backfilled = 0;
    const feeder = new CacheFeeder({
      cache,
      changes: log(11) as ChangeLogRepository,
      currentRevision: async () => 11,
      logger: silent,
      onBackfill: (n) => (backfilled += n),
    });
    await feeder.applyStream([change(6), change(7)]);
    await feeder.applyStream([change(7), change(10), change(11)]);
    assert.deepEqual(cache.since(5)!.map((c) => c.revision), [6, 7, 8, 9, 10, 11]);
    // The fill reads what the log has (8–11); the stream's own 10 and 11 are then repeats.
    assert.equal(backfilled, 4);
  });

  it('restarts the window (ending watchers) when the history it needs was compacted', async () => {
    const cache = new WatchCache(100);
    cache.reset(5);
    const sub = new Recorder(WatchCache.bucketKey('default', 'configmaps'));
    cache.subscribe(sub);
    const feeder = new CacheFeeder({ cache, changes: log(50, 30) as ChangeLogRepository, currentRevision: async () => 50, logger: silent });
    await feeder.catchUp();
    assert.equal(cache.revision, 50);
    assert.equal(cache.oldestResumable, 50);
    assert.match(sub.ended ?? '', /fell behind/);
  });
});

describe('FanOutClock', () => {
  it('times each change handed to watchers, with its NOTIFY time when one arrived, and forgets NOTIFYs of changes nobody watched', () => {
    const timings: Array<FanOutTiming & { revision: number }> = [];
    let revision = 0;
    const clock = new FanOutClock((t) => timings.push({ ...t, revision }));
    const cache = new WatchCache(10, (rev, n, startedAt) => {
      revision = rev;
      clock.dispatched(rev, n, startedAt);
    });
    cache.reset(0);
    cache.subscribe(new Recorder(WatchCache.bucketKey('default', 'configmaps')));
    cache.subscribe(new Recorder(WatchCache.bucketKey('default', 'configmaps')));
    clock.notify(1);
    clock.notify(2);
    clock.notify(3);
    cache.append(change(1));
    cache.append(change(2, 'secrets'));
    cache.append(change(3));
    cache.append(change(4));
    assert.deepEqual(
      timings.map((t) => [t.revision, t.subscribers, t.sinceNotifyMs !== undefined]),
      [
        [1, 2, true],
        [3, 2, true],
        [4, 2, false],
      ],
    );
    for (const t of timings) assert.ok(t.dispatchMs >= 0 && (t.sinceNotifyMs === undefined || t.sinceNotifyMs >= t.dispatchMs));
    // Revision 2 had no watchers: its NOTIFY time went with the dispatch of 3, so a later 2 could not match it.
    clock.dispatched(2, 1, 0);
    assert.equal(timings.at(-1)!.sinceNotifyMs, undefined);
  });
});
