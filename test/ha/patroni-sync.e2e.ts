import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { eventually } from '../support/eventually.js';
import { assertInformersConverge, type HaEnv, NS, setUp, skipHa, tearDown } from './support/ha-env.js';
import { Informer, RevisionLedger, startWriters } from './support/ha-load.js';

describe('high availability: Patroni, synchronous replication (one replica on a three-host URL, one through HAProxy)', { skip: skipHa, timeout: 150_000 }, () => {
  let env: HaEnv | undefined;
  before(async () => {
    env = await setUp(true, true);
  });
  after(() => tearDown(env));

  it('says in /readyz?verbose that an acknowledged write survives the loss of the primary (strict synchronous replication, a standby streaming)', async () => {
    for (const r of env!.replicas) {
      const body = await eventually(
        async () => {
          const res = await request(r.url).get('/readyz?verbose').expect(200);
          assert.match(res.text, /^\[\+\]shard-default-durability ok \(acknowledged writes survive the loss of the primary \(synchronous_standby_names '[^']+', 1 synchronous standby, synchronous_commit=on\)\)$/m);
          return res.text;
        },
        { timeoutMs: 20_000, intervalMs: 250, message: 'the durability line of the platform shard' },
      );
      assert.doesNotMatch(body, /may be lost/);
    }
  });

  it('follows a switchover and a primary SIGKILL under writers on two replicas: no acknowledged write lost, no revision reused, no 500, no hang', async () => {
    const { pg, replicas } = env!;
    const ledger = new RevisionLedger();
    const informers = replicas.map((r) => new Informer(r.url, NS, ledger));
    const writers = startWriters(replicas, NS, 4, ledger);
    await eventually(() => writers.stats.acked.size > 50, { timeoutMs: 20_000, message: 'writes acknowledged' });

    const first = await pg.primary();
    const switchedAt = Date.now();
    await pg.switchover();
    await eventually(async () => (await pg.primary()) !== undefined && (await pg.primary()) !== first, { timeoutMs: 30_000, message: 'a new primary' });
    await eventually(() => writers.stats.ackTimes.some((t) => t > switchedAt + 500) && writers.stats.ackTimes.filter((t) => t > switchedAt).length > 20, { timeoutMs: 30_000, message: 'writes acknowledged after the switchover' });

    // Patroni names a synchronous standby for the new primary (only then may it fail over from it).
    await pg.waitHealthy(60_000);
    const second = await pg.primary();
    const killedAt = Date.now();
    await pg.signalNode(pg.node(second!), 'SIGKILL');
    await eventually(async () => (await pg.primary()) !== undefined && (await pg.primary()) !== second, { timeoutMs: 40_000, message: 'failover after SIGKILL' });
    await eventually(() => writers.stats.ackTimes.filter((t) => t > killedAt).length > 20, { timeoutMs: 30_000, message: 'writes acknowledged after the failover' });
    await writers.stop();

    const state = await assertInformersConverge(replicas[1].url, informers);
    for (const inf of informers) await inf.stop();
    const lost = [...writers.stats.acked].filter(([name, rv]) => state.get(name) !== rv);
    assert.deepEqual(lost, [], 'every acknowledged write survived');
    assert.deepEqual(ledger.reused, [], 'no resourceVersion handed out twice');
    assert.deepEqual(writers.stats.problems, [], 'no 500, no 503 without Retry-After, no hang');
    console.log(`# synchronous: ${writers.stats.acked.size} acknowledged, statuses ${JSON.stringify(Object.fromEntries(writers.stats.statuses))}`);
  });
});
