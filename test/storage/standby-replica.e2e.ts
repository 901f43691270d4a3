import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { StandbyBehind, StandbyReads, StandbyReplica } from '@plinth/storage';
import { useStorageDatabase } from '../support/storage-database.js';

/**
 * What decides whether a read replica may serve (StandbyReplica), on a real
 * server standing in for the standby: the epoch check of its connections,
 * the revision it holds, its lag, the primary's confirmation and the back-off
 * after a failure. (test/ha/standby-reads.e2e.ts runs a real standby.)
 */
describe('StandbyReplica: when a read replica may serve', () => {
  const s = useStorageDatabase('standby_replica');
  let replica: StandbyReplica;
  let sid = '';
  let timeline = 0;
  let counter = 0;

  before(async () => {
    const { rows } = await sql<{ timeline: number; sid: string; value: number }>`
      SELECT e.timeline, e.system_identifier AS sid, rc.value FROM revision_epochs e CROSS JOIN revision_counter rc ORDER BY e.timeline DESC LIMIT 1`.execute(s.db);
    ({ timeline, sid, value: counter } = rows[0]);
    replica = new StandbyReplica({ url: s.tdb.url, rowSecurity: true, timeoutMs: 1000, maxLagMs: 2000 });
  });
  after(() => replica.close());

  it('serves nothing before the primary confirmed its timeline', async () => {
    assert.equal(await replica.probe(), undefined);
    assert.equal(replica.serves({}), false);
  });

  it('refuses a server that lacks the fence (epoch row) of the primary\'s timeline: one on a lost history', async () => {
    replica.primaryConfirmed({ systemIdentifier: sid, timeline: timeline + 7, counter });
    assert.equal(await replica.probe(), undefined, 'no connection passes the epoch check');
    assert.equal(replica.serves({}), false);
    replica.primaryConfirmed({ systemIdentifier: 'another-cluster', timeline, counter });
    assert.equal(await replica.probe(), undefined, 'nor a server of another cluster');
  });

  it('serves Any while caught up, NotOlderThan only up to the revision it holds', async () => {
    const now = Date.now();
    replica.primaryConfirmed({ systemIdentifier: sid, timeline, counter }, now);
    const found = await replica.probe(now);
    assert.deepEqual(found && { revision: found.revision, lagMs: found.lagMs }, { revision: counter, lagMs: 0 });
    assert.equal(replica.serves({}, now), true);
    assert.equal(replica.serves({ notOlderThan: counter }, now), true);
    assert.equal(replica.serves({ notOlderThan: counter + 1 }, now), false);
  });

  it('stops serving Any past the lag bound, and everything once the primary is not confirmed or after a failure', async () => {
    const now = Date.now();
    // The primary was ahead of the standby 3 s ago (and still is): 3 s behind, over the 2 s bound.
    replica.primaryConfirmed({ systemIdentifier: sid, timeline, counter: counter + 5 }, now - 3000);
    replica.primaryConfirmed({ systemIdentifier: sid, timeline, counter: counter + 5 }, now);
    assert.ok((await replica.probe(now))!.lagMs >= 3000);
    assert.equal(replica.serves({}, now), false, 'Any: too far behind');
    assert.equal(replica.serves({ notOlderThan: counter }, now), true, 'NotOlderThan a revision it holds: still served');
    assert.equal(replica.serves({ notOlderThan: counter }, now + 3500), false, 'no confirmation of the primary for 3.5 s');
    replica.primaryLost();
    assert.equal(replica.serves({ notOlderThan: counter }, now), false, 'the primary did not answer');
    replica.primaryConfirmed({ systemIdentifier: sid, timeline, counter: counter + 5 }, now);
    replica.failed(now);
    assert.equal(replica.serves({ notOlderThan: counter }, now + 100), false, 'backing off after a failed read');
    assert.equal(replica.serves({ notOlderThan: counter }, now + 2100), true, 'and serving again after the back-off');
  });

  it('answers a get with the revision of its own snapshot, and refuses one older than the read allows', async () => {
    const reads = new StandbyReads(() => 'default');
    const key = { tenant: 'default', resource: 'configmaps', namespace: 'x', name: 'missing' };
    const got = await reads.get(replica, key, { notOlderThan: counter });
    assert.deepEqual(got, { object: undefined, revision: counter });
    await assert.rejects(reads.get(replica, key, { notOlderThan: counter + 1 }), StandbyBehind);
  });
});
