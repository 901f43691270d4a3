import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { eventually } from '../support/eventually.js';
import { assertInformersConverge, type HaEnv, NS, setUp, skipHa, tearDown, signalWalReceivers } from './support/ha-env.js';
import { Informer, RevisionLedger, startWriters } from './support/ha-load.js';

describe('high availability: Patroni, asynchronous replication losing the last commits', { skip: skipHa, timeout: 150_000 }, () => {
  let env: HaEnv | undefined;
  before(async () => {
    env = await setUp(false);
  });
  after(() => tearDown(env));

  it('says in /readyz?verbose that an acknowledged write may be lost with the primary (asynchronous replication)', async () => {
    const res = await request(env!.replicas[0].url).get('/readyz?verbose').expect(200);
    assert.match(res.text, /^\[\+\]shard-default-durability ok \(acknowledged writes may be lost with the primary \(synchronous_standby_names is empty: the primary acknowledges alone\); revisions are never reused\)$/m);
  });

  it('hands no resourceVersion out twice, and informers that saw lost revisions get 410 and relist', async () => {
    const { pg, replicas } = env!;
    const ledger = new RevisionLedger();
    const informers = replicas.map((r) => new Informer(r.url, NS, ledger));
    const writers = startWriters(replicas, NS, 4, ledger);
    await eventually(() => writers.stats.acked.size > 50, { timeoutMs: 20_000, message: 'writes acknowledged' });

    // Cut the standbys off (their WAL receivers frozen), write on for a while, then kill the primary.
    const primary = (await pg.primary())!;
    const standbys = pg.nodes.filter((n) => n.name !== primary).map((n) => n.name);
    for (const s of standbys) await signalWalReceivers(pg, s, 'SIGSTOP');
    const cutAt = Date.now();
    await eventually(() => writers.stats.ackTimes.filter((t) => t > cutAt).length > 40, { timeoutMs: 40_000, message: 'writes acknowledged while the standbys are cut off' });
    await pg.signalNode(pg.node(primary), 'SIGKILL');
    const killedAt = Date.now();
    // Killed rather than resumed: a resumed receiver would still read the WAL the primary had sent into its socket.
    // (The standby's postmaster restarts its processes and recovers from its own WAL.)
    for (const s of standbys) await signalWalReceivers(pg, s, 'SIGKILL');
    await eventually(async () => (await pg.primary()) !== undefined && (await pg.primary()) !== primary, { timeoutMs: 40_000, message: 'failover' });
    await eventually(() => writers.stats.ackTimes.filter((t) => t > killedAt).length > 50, { timeoutMs: 30_000, message: 'writes acknowledged on the new primary' });
    await writers.stop();
    assert.deepEqual(ledger.reused.slice(0, 10), [], `no resourceVersion handed out twice for different contents (${ledger.reused.length} were)`);

    const state = await assertInformersConverge(replicas[0].url, informers);
    for (const inf of informers) await inf.stop();
    const lost = [...writers.stats.acked].filter(([name, rv]) => state.get(name) !== rv).length;
    console.log(`# asynchronous: ${writers.stats.acked.size} acknowledged, ${lost} lost, 410s ${informers.map((i) => i.expired).join('/')}, statuses ${JSON.stringify(Object.fromEntries(writers.stats.statuses))}`);
    assert.ok(lost > 0, 'the failover lost acknowledged commits (the case under test)');
    assert.deepEqual(ledger.reused, [], 'no resourceVersion handed out twice for different contents');
    assert.ok(informers.every((i) => i.expired > 0), `every informer got 410 Expired and relisted (${informers.map((i) => i.expired).join('/')})`);
    assert.deepEqual(writers.stats.problems, [], 'no 500, no 503 without Retry-After, no hang');
  });
});
