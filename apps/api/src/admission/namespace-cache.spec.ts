import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WatchCache } from '@plinth/storage';
import { NamespaceCache } from './namespace-cache.js';

/** A NamespaceCache over a counting reader of `stored`, attached to a fresh watch cache. */
function setup() {
  const stored = new Map<string, Record<string, unknown>>([['t/ns', { metadata: { name: 'ns' }, status: { phase: 'Active' } }]]);
  let reads = 0;
  const cache = new NamespaceCache(async (tenant, name) => {
    reads++;
    return stored.get(`${tenant}/${name}`);
  });
  const changes = new WatchCache(100);
  cache.attach(changes);
  const change = (revision: number, body: Record<string, unknown>) =>
    changes.append({ revision, key: { tenant: 't', resource: 'namespaces', namespace: '', name: 'ns' }, type: 'MODIFIED', object: body, prevObject: null });
  return { cache, stored, change, reads: () => reads };
}

describe('NamespaceCache', () => {
  it('reads a namespace once, then answers from memory until its change arrives', async () => {
    const { cache, stored, change, reads } = setup();
    assert.deepEqual((await cache.get('t', 'ns'))?.status, { phase: 'Active' });
    await cache.get('t', 'ns');
    assert.equal(reads(), 1);
    const terminating = { metadata: { name: 'ns' }, status: { phase: 'Terminating' } };
    stored.set('t/ns', terminating);
    change(2, terminating);
    assert.deepEqual((await cache.get('t', 'ns'))?.status, { phase: 'Terminating' });
    assert.equal(reads(), 2);
  });

  it('never remembers a missing namespace', async () => {
    const { cache, reads } = setup();
    assert.equal(await cache.get('t', 'absent'), undefined);
    assert.equal(await cache.get('t', 'absent'), undefined);
    assert.equal(reads(), 2);
  });

  it('reads a namespace from storage after this replica admitted its deletion, before its change arrives', async () => {
    const { cache, stored, reads } = setup();
    await cache.get('t', 'ns');
    cache.deleting('t', 'ns');
    // The DELETE committed (Terminating) but its change has not reached this replica yet.
    stored.set('t/ns', { metadata: { name: 'ns' }, status: { phase: 'Terminating' } });
    assert.deepEqual((await cache.get('t', 'ns'))?.status, { phase: 'Terminating' });
    await cache.get('t', 'ns');
    assert.equal(reads(), 3, 'every lookup goes to storage while the deletion is fresh');
  });
});
