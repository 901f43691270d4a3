import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, it } from 'node:test';
import type { ChangeEvent, ChangeLogRepository } from '../change-log.repository.js';
import { AesGcmTransformer } from '../value/aes-transformers.js';
import { installResourceTransformers, sealBody } from '../value/stored-body.js';
import { PrefixTransformers } from '../value/value-transformer.js';
import { CacheFeeder } from './cache-feeder.js';
import { type CachedChange, type CacheSubscriber, WatchCache } from './watch-cache.js';

const silent = { info() {}, warn() {}, error() {} };
const key = (name: string) => ({ tenant: 't', resource: 'secrets', namespace: 'ns', name });

function aesgcm(name: string): PrefixTransformers {
  const keys = new PrefixTransformers('no matching key was found for the provided AES transformer', [{ prefix: Buffer.from(`${name}:`), transformer: new AesGcmTransformer(randomBytes(32)) }]);
  return new PrefixTransformers('no matching prefix found', [{ prefix: Buffer.from('k8s:enc:aesgcm:v1:'), transformer: keys }]);
}

function use(t: PrefixTransformers): () => void {
  return installResourceTransformers({ forResource: (r) => (r === 'secrets' ? { transformer: t, encrypts: true } : undefined) });
}

/** A stored (encrypted) change as the change log and Redis carry it. */
function sealed(revision: number, name: string, value: string): ChangeEvent {
  const object = sealBody(key(name), { metadata: { name, namespace: 'ns', labels: { a: 'b' } }, data: { v: value } });
  return { revision, key: key(name), type: 'ADDED', object: { ...object, metadata: { ...(object.metadata as object), resourceVersion: String(revision) } }, prevObject: null };
}

class Recorder implements CacheSubscriber {
  readonly seen: CachedChange[] = [];
  constructor(
    readonly bucket: string,
    readonly receivesUnreadable?: boolean,
  ) {}
  onChange(c: CachedChange): void {
    this.seen.push(c);
  }
  onEnd(): void {}
}

let restore = () => {};
afterEach(() => restore());

describe('the watch cache with encrypted changes', () => {
  it('decrypts changes as they enter the cache: watchers and observers see the object', () => {
    restore = use(aesgcm('key1'));
    const cache = new WatchCache(8);
    cache.reset(0);
    const observed: CachedChange[] = [];
    cache.observe('secrets', { onChange: (c) => observed.push(c), onReset() {} });
    const sub = new Recorder(WatchCache.bucketKey('t', 'secrets'));
    cache.subscribe(sub);
    new CacheFeeder({ cache, changes: {} as ChangeLogRepository, currentRevision: async () => 1, logger: silent }).applyLog([sealed(1, 'a', 'plain-a')]);
    assert.deepEqual(sub.seen[0].object, { metadata: { name: 'a', namespace: 'ns', labels: { a: 'b' }, resourceVersion: '1' }, data: { v: 'plain-a' } });
    assert.equal(observed.length, 1);
    assert.equal(sub.seen[0].unreadable, undefined);
  });

  it('marks a change whose key is gone unreadable: watches get it (to answer an error), caches of other concerns do not', () => {
    restore = use(aesgcm('key1'));
    const written = sealed(1, 'a', 'plain-a');
    restore();
    restore = use(aesgcm('key2'));
    const cache = new WatchCache(8);
    cache.reset(0);
    const observed: CachedChange[] = [];
    cache.observe('secrets', { onChange: (c) => observed.push(c), onReset() {} });
    const watch = new Recorder(WatchCache.bucketKey('t', 'secrets'), true);
    const state = new Recorder(WatchCache.bucketKey('t', 'secrets'));
    cache.subscribe(watch);
    cache.subscribe(state);
    new CacheFeeder({ cache, changes: {} as ChangeLogRepository, currentRevision: async () => 2, logger: silent }).applyLog([written, sealed(2, 'b', 'plain-b')]);
    assert.equal(watch.seen.length, 2);
    assert.equal(watch.seen[0].unreadable, 'no matching key was found for the provided AES transformer');
    assert.equal(JSON.stringify(watch.seen[0].object).includes('plain-a'), false);
    assert.deepEqual(state.seen.map((c) => c.revision), [2]);
    assert.deepEqual(observed.map((c) => c.revision), [2]);
    assert.equal(cache.revision, 2);
  });
});
