import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { survivesPrimaryLoss } from './revision-fence.js';

describe('survivesPrimaryLoss', () => {
  it('is true when commits wait for a named standby, even while none streams (strict mode: writes wait)', () => {
    assert.equal(survivesPrimaryLoss({ synchronousStandbys: 1, synchronousCommit: 'on', synchronousStandbyNames: 'pg1' }), true);
    assert.equal(survivesPrimaryLoss({ synchronousStandbys: 0, synchronousCommit: 'on', synchronousStandbyNames: '*' }), true);
    assert.equal(survivesPrimaryLoss({ synchronousStandbys: 1, synchronousCommit: 'remote_apply', synchronousStandbyNames: 'FIRST 1 (pg1, pg2)' }), true);
  });

  it('is false when synchronous_standby_names is empty (non-strict Patroni after a promotion or with no healthy standby), whatever streams', () => {
    assert.equal(survivesPrimaryLoss({ synchronousStandbys: 0, synchronousCommit: 'on', synchronousStandbyNames: '' }), false);
    assert.equal(survivesPrimaryLoss({ synchronousStandbys: 2, synchronousCommit: 'on', synchronousStandbyNames: ' ' }), false);
  });

  it('is false when the sessions commit without waiting for a standby', () => {
    assert.equal(survivesPrimaryLoss({ synchronousStandbys: 1, synchronousCommit: 'local', synchronousStandbyNames: 'pg1' }), false);
  });
});
