import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { eventually } from '../support/eventually.js';
import type { TestPostgres } from '../support/test-postgres.js';
import type { TestServer } from '../support/test-server.js';
import { conditionOf, createMany, query, type ShardedSetup, startShardedReplicas, TENANTS } from './support/shards.js';

// A move whose destination PostgreSQL is killed while it copies, with two replicas serving the tenant.
describe('shards: a failed move rolls back', { timeout: 180_000 }, () => {
  let setup: ShardedSetup;
  let s: TestServer;
  let second: TestServer;
  let b: TestPostgres;
  let c: TestPostgres;

  before(async () => {
    setup = await startShardedReplicas('shard_rollback');
    ({ s, second, b, c } = setup);
  });
  after(async () => setup?.close());

  it('rolls a move back when its destination dies mid-copy: the tenant stays where it was, nothing lost', async () => {
    await request(s.url).post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'unlucky' }, spec: { shard: 'b' } }).expect(201);
    const P = '/clusters/unlucky/api/v1/namespaces/default/configmaps';
    const made = Array.from({ length: 500 }, (_, i) => `u-${i}`);
    await createMany(s.url, P, made.length, (i) => ({ metadata: { name: made[i] }, data: { i: String(i) } }));
    // The destination stalls on the copy of the tenant's first object, so that it dies mid-copy, not before or after.
    await query(c.url, `CREATE FUNCTION stall_copy() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        IF NEW.tenant = 'unlucky' THEN PERFORM pg_sleep(60); END IF; RETURN NEW; END $$;
      CREATE TRIGGER stall_copy BEFORE INSERT ON objects FOR EACH ROW EXECUTE FUNCTION stall_copy()`);
    await request(s.url).patch(`${TENANTS}/unlucky`).set('Content-Type', 'application/merge-patch+json').send({ spec: { shard: 'c' } }).expect(200);
    await eventually(async () => (await query(c.url, "SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep'")).length > 0, {
      message: 'the copy to stall on the destination',
      timeoutMs: 60_000,
    });
    assert.equal(conditionOf((await request(s.url).get(`${TENANTS}/unlucky`)).body, 'Moving')?.reason, 'Copying');
    await c.kill();
    const failed = await eventually(async () => {
      const t = (await request(s.url).get(`${TENANTS}/unlucky`)).body;
      return conditionOf(t, 'Moving')?.reason === 'MoveFailed' ? t : false;
    }, { message: 'the rollback', timeoutMs: 60_000 });
    assert.equal(failed.spec.shard, 'b');
    assert.equal(failed.status.shard, 'b');
    const list = (await request(second.url).get(P).expect(200)).body;
    const names = list.items.map((o: { metadata: { name: string } }) => o.metadata.name).filter((n: string) => n.startsWith('u-'));
    assert.deepEqual(names.sort(), [...made].sort());
    await request(s.url).post(P).send({ metadata: { name: 'after-rollback' } }).expect(201);
    await c.restart();
  });
});
