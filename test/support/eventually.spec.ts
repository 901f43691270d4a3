import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventually } from './eventually.js';

describe('eventually', () => {
  it('retries while the check throws or returns false, and resolves with what it returned then', async () => {
    let calls = 0;
    const got = await eventually(() => {
      calls++;
      if (calls === 1) throw new Error('not yet');
      return calls < 3 ? false : { calls };
    }, { intervalMs: 1 });
    assert.deepEqual(got, { calls: 3 });
  });

  it('takes a block of assertions that returns nothing as passed', async () => {
    assert.equal(await eventually(() => assert.ok(true)), undefined);
  });

  it('gives up with an error naming what it waited for and the last failure, that failure as its cause', async () => {
    const last = new Error('status 404');
    const err = await eventually(() => {
      throw last;
    }, { timeoutMs: 20, intervalMs: 1, message: 'the CRD served' }).then(() => undefined, (e: Error) => e);
    assert.ok(err instanceof Error);
    assert.match(err.message, /^gave up after 20 ms \(\d+ tries\) waiting for the CRD served; last: status 404$/);
    assert.equal(err.cause, last);
    await assert.rejects(eventually(() => false, { timeoutMs: 5, intervalMs: 1 }), /waiting for the check to pass; it was still false$/);
  });
});
