import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BatchSizer, SnapshotPacer } from './snapshot-pacer.js';

describe('BatchSizer', () => {
  it('grows a batch that took less than the target by a quarter, up to the most', () => {
    const s = new BatchSizer(10, 8, 60);
    assert.equal(s.size, 8);
    assert.equal(s.observe(8, 2), 10);
    assert.equal(s.observe(10, 2), 13);
    for (let i = 0; i < 20; i++) s.observe(s.size, 1);
    assert.equal(s.size, 60);
  });

  it('halves a batch that took more than half again the target, down to the fewest', () => {
    const s = new BatchSizer(10, 8, 60);
    for (let i = 0; i < 20; i++) s.observe(s.size, 1);
    assert.equal(s.observe(60, 16), 30);
    assert.equal(s.observe(30, 50), 15);
    assert.equal(s.observe(15, 50), 8);
    assert.equal(s.observe(8, 50), 8);
  });

  it('keeps the size after a batch near the target, or a short last batch', () => {
    const s = new BatchSizer(10, 8, 60);
    assert.equal(s.observe(8, 12), 8);
    assert.equal(s.observe(3, 1), 8);
  });
});

describe('SnapshotPacer', () => {
  it('runs a unit and returns its result, resting after it', async () => {
    const p = new SnapshotPacer({ duty: 0.5, sliceMs: 1, lateMs: 1000, maxStretch: 4, maxRestMs: 50 });
    assert.equal(await p.paced(async () => 42), 42);
    await p.rest(5);
    assert.ok(p.rested > 0);
  });

  it('lets other callbacks run between slices of work', async () => {
    const p = new SnapshotPacer({ duty: 1, sliceMs: 0, lateMs: 1000, maxStretch: 4, maxRestMs: 50 });
    let ran = false;
    setImmediate(() => (ran = true));
    const until = performance.now() + 2;
    while (performance.now() < until);
    await p.step();
    assert.ok(ran);
  });
});
