import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WorkerSiblings } from './worker-siblings.js';

describe('WorkerSiblings (the /readyz check of a worker process)', () => {
  it('fails in a worker until the primary says every worker serves, then passes', () => {
    const s = new WorkerSiblings(true);
    assert.deepEqual(s.readyzLine(), { ok: false, line: '[-]workers failed: not every worker process of this host serves yet' });
    s.markAllServing();
    assert.deepEqual(s.readyzLine(), { ok: true, line: '[+]workers ok' });
  });

  it('is no check at all in a process serving alone', () => {
    assert.equal(new WorkerSiblings(false).readyzLine(), undefined);
  });
});
