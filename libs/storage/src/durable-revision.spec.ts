import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import type { DB } from './db.js';
import { awaitKnownDurable, knownDurable, noteDurable, trackWrite } from './durable-revision.js';

/** A stand-in shard handle: the marks only use it as a key. */
const shard = () => ({}) as Kysely<DB>;

/** A write that is acknowledged as durable with a revision, or fails, when the test says so. */
function pendingWrite(db: Kysely<DB>) {
  let settle!: (revision?: number) => void;
  const done = trackWrite(
    db,
    () =>
      new Promise<{ r: number }>((resolve, reject) => {
        settle = (revision) => (revision === undefined ? reject(new Error('refused')) : resolve({ r: revision }));
      }),
  ).catch(() => undefined);
  return { ack: (revision: number) => settle(revision), fail: () => settle(), done };
}

describe('durable revisions', () => {
  it('knows a revision durable once a flush covered it or a later one, per shard, and never forgets', () => {
    const a = shard();
    const b = shard();
    assert.equal(knownDurable(a, 1), false, 'nothing is known of a shard never written');
    noteDurable(a, 10);
    assert.equal(knownDurable(a, 10), true);
    assert.equal(knownDurable(a, 3), true, 'a write holds the counter until it commits: below 10 everything committed before 10');
    assert.equal(knownDurable(a, 11), false);
    noteDurable(a, 4);
    assert.equal(knownDurable(a, 10), true, 'an older acknowledgement does not lower the mark');
    assert.equal(knownDurable(b, 5), false, 'revisions are numbered per shard');
  });

  it('answers at once when the revision is known, or when this process has no write in flight on the shard', () => {
    const a = shard();
    noteDurable(a, 7);
    assert.equal(awaitKnownDurable(a, 7, 1000), true);
    assert.equal(awaitKnownDurable(a, 8, 1000), false, 'nothing in flight would raise the mark: the reader runs the barrier');
  });

  it('waits for a write in flight whose acknowledgement covers the revision', async () => {
    const a = shard();
    const w = pendingWrite(a);
    const known = awaitKnownDurable(a, 12, 10_000);
    assert.ok(known instanceof Promise, 'a write is in flight: the reader waits for it');
    w.ack(15);
    assert.equal(await known, true);
    await w.done;
  });

  it('stops waiting once the writes in flight end without covering the revision, or when the wait runs out', async () => {
    const a = shard();
    const first = pendingWrite(a);
    const second = pendingWrite(a);
    const known = awaitKnownDurable(a, 20, 10_000);
    first.ack(19);
    second.fail();
    assert.equal(await known, false, 'the last write in flight ended and 20 is still not known');
    await Promise.all([first.done, second.done]);

    const stuck = pendingWrite(a);
    assert.equal(await awaitKnownDurable(a, 30, 20), false, 'a write that is not acknowledged in time does not hold the reader');
    stuck.ack(31);
    await stuck.done;
    assert.equal(knownDurable(a, 30), true);
  });
});
