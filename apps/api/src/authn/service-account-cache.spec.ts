import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ChangeObserver } from '@plinth/storage';
import { cachedServiceAccountLookup } from './service-account-cache.js';

/** A change stream that the test drives by hand, and a store of uids that counts reads. */
function setup() {
  const observers: ChangeObserver[] = [];
  const store = new Map<string, string>([['t/ns/ci', 'uid-1']]);
  let reads = 0;
  let gate: Promise<void> = Promise.resolve();
  const lookup = cachedServiceAccountLookup(
    async (tenant, namespace, name) => {
      reads++;
      const uid = store.get(`${tenant}/${namespace}/${name}`);
      await gate;
      return uid;
    },
    (_resource, observer) => {
      observers.push(observer);
      return () => undefined;
    },
    'serviceaccounts',
  );
  const change = (name: string) => {
    for (const o of observers) o.onChange({ revision: 1, type: 'MODIFIED', key: { tenant: 't', resource: 'serviceaccounts', namespace: 'ns', name }, object: {} } as never);
  };
  return { lookup, store, change, reads: () => reads, hold: (p: Promise<void>) => (gate = p), observers };
}

describe('cachedServiceAccountLookup', () => {
  it('answers repeated lookups from memory and reads again after a change to that ServiceAccount', async () => {
    const t = setup();
    assert.equal(await t.lookup('t', 'ns', 'ci'), 'uid-1');
    assert.equal(await t.lookup('t', 'ns', 'ci'), 'uid-1');
    assert.equal(t.reads(), 1);
    t.store.set('t/ns/ci', 'uid-2');
    t.change('other');
    assert.equal(await t.lookup('t', 'ns', 'ci'), 'uid-1', 'a change to another account keeps this one');
    t.change('ci');
    assert.equal(await t.lookup('t', 'ns', 'ci'), 'uid-2');
    t.store.delete('t/ns/ci');
    t.change('ci');
    assert.equal(await t.lookup('t', 'ns', 'ci'), undefined);
    assert.equal(await t.lookup('t', 'ns', 'ci'), undefined);
    assert.equal(t.reads(), 4, 'absent accounts are not remembered');
  });

  it('does not remember a read that a change overtook, and forgets everything on a reset', async () => {
    const t = setup();
    let release!: () => void;
    t.hold(new Promise<void>((r) => (release = r)));
    const inFlight = t.lookup('t', 'ns', 'ci');
    t.store.delete('t/ns/ci');
    t.change('ci');
    release();
    assert.equal(await inFlight, 'uid-1');
    assert.equal(await t.lookup('t', 'ns', 'ci'), undefined, 'the stale read was not kept');
    t.store.set('t/ns/ci', 'uid-3');
    assert.equal(await t.lookup('t', 'ns', 'ci'), 'uid-3');
    t.store.set('t/ns/ci', 'uid-4');
    for (const o of t.observers) o.onReset();
    assert.equal(await t.lookup('t', 'ns', 'ci'), 'uid-4');
  });
});
