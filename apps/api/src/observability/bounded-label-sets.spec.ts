import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BoundedLabelSets } from './bounded-label-sets.js';

describe('BoundedLabelSets', () => {
  it('keeps the first sets as they are, repeats of them too, and reports every later set as _other', () => {
    const sets = new BoundedLabelSets(2);
    assert.deepEqual(sets.bound({ tenant: 'a', name: 'x' }), { tenant: 'a', name: 'x' });
    assert.deepEqual(sets.bound({ tenant: 'b', name: 'x' }), { tenant: 'b', name: 'x' });
    assert.deepEqual(sets.bound({ tenant: 'c', name: 'x' }), { tenant: '_other', name: '_other' });
    assert.deepEqual(sets.bound({ tenant: 'a', name: 'x' }), { tenant: 'a', name: 'x' });
  });
});
