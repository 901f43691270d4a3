import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TenantCache } from './tenant-cache.js';

const acme = { name: 'acme', uid: 'u', phase: 'Active' as const, createdRevision: 1, arrivedRevision: 0, historyFloor: 0 };
const lookup = (asked: string[]) => ({ get: async (n: string) => (asked.push(n), n === 'acme' ? acme : undefined) });

describe('TenantCache', () => {
  it('answers repeated lookups from the cache, including "does not exist"', async () => {
    const asked: string[] = [];
    const cache = new TenantCache(lookup(asked));
    assert.equal(await cache.exists('acme'), true);
    assert.equal(await cache.exists('acme'), true);
    assert.equal(await cache.exists('nope'), false);
    assert.equal(await cache.exists('nope'), false);
    assert.deepEqual(asked, ['acme', 'nope']);
  });

  it('asks again after forget', async () => {
    const asked: string[] = [];
    const cache = new TenantCache(lookup(asked));
    assert.deepEqual(await cache.get('acme'), acme);
    cache.forget('acme');
    assert.deepEqual(await cache.get('acme'), acme);
    assert.deepEqual(asked, ['acme', 'acme']);
  });

  it('stays bounded under a flood of made-up tenant names, keeping the recently used', async () => {
    const asked: string[] = [];
    const cache = new TenantCache(lookup(asked));
    await cache.exists('acme');
    for (let i = 0; i < 12_000; i++) {
      await cache.exists(`made-up-${i}`);
      if (i % 1000 === 0) await cache.exists('acme');
    }
    assert.equal(cache.size, 10_000);
    asked.length = 0;
    assert.equal(await cache.exists('acme'), true);
    assert.deepEqual(asked, []);
  });
});
