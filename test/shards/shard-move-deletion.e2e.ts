import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { createDatabase, ObjectStoreRepository, TenantRepository } from '@plinth/storage';
import { TenantMover } from '../../apps/api/src/sharding/tenant-mover.js';
import { eventually } from '../support/eventually.js';
import type { TestPostgres } from '../support/test-postgres.js';
import type { TestServer } from '../support/test-server.js';
import { createMany, query, type ShardedSetup, startShardedReplicas, TENANTS } from './support/shards.js';

const MERGE = 'application/merge-patch+json';

/** Rows of `tenant` in `tenants`, `objects` and `changes` of the database at `url`. */
async function rowsOf(url: string, tenant: string): Promise<number> {
  const [r] = await query<{ n: string }>(url, 'SELECT (SELECT count(*) FROM tenants WHERE name = $1) + (SELECT count(*) FROM objects WHERE tenant = $1) + (SELECT count(*) FROM changes WHERE tenant = $1) AS n', [tenant]);
  return Number(r.n);
}

// Two replicas, shards b and c: a tenant deleted while it is being moved, and a new tenant of a name whose rows an
// earlier tenant left on a shard.
describe('shards: deleting a tenant during a move, and rows left behind', { timeout: 300_000 }, () => {
  let setup: ShardedSetup;
  let s: TestServer;
  let second: TestServer;
  let b: TestPostgres;
  let c: TestPostgres;
  const everywhere = () => ({ default: s.database.url, b: b.url, c: c.url });

  before(async () => {
    setup = await startShardedReplicas('shard_move_deletion');
    ({ s, second, b, c } = setup);
  });
  after(async () => setup?.close());

  it('ends the move, then deletes the tenant on every shard; a new tenant of the name starts empty', async () => {
    await request(s.url).post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'doomed' }, spec: { shard: 'b' } }).expect(201);
    const P = '/clusters/doomed/api/v1/namespaces/default/configmaps';
    await createMany(s.url, P, 300, (i) => ({ metadata: { name: `old-${i}` }, data: { i: String(i) } }));
    const [{ uid: oldUid }] = await query<{ uid: string }>(b.url, 'SELECT uid FROM tenants WHERE name = $1', ['doomed']);
    // The move is held at its arrival on c (the step before the switch), and the deletion's purge on b is slowed:
    // the tenant is deleted while the move is about to switch it.
    await query(c.url, `CREATE FUNCTION hold_arrival() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        IF NEW.name = 'doomed' AND OLD.fenced AND NOT NEW.fenced THEN PERFORM pg_sleep(4); END IF; RETURN NEW; END $$;
      CREATE TRIGGER hold_arrival BEFORE UPDATE ON tenants FOR EACH ROW EXECUTE FUNCTION hold_arrival()`);
    await query(b.url, `CREATE FUNCTION slow_purge() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(2); RETURN NULL; END $$;
      CREATE TRIGGER slow_purge BEFORE DELETE ON objects FOR EACH STATEMENT EXECUTE FUNCTION slow_purge()`);
    try {
      await request(s.url).patch(`${TENANTS}/doomed`).set('Content-Type', MERGE).send({ spec: { shard: 'c' } }).expect(200);
      await eventually(async () => (await query(c.url, "SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep'")).length > 0, { message: 'the arrival held', timeoutMs: 60_000 });
      await request(second.url).delete(`${TENANTS}/doomed`).expect(202);
      await eventually(async () => (await request(s.url).get(`${TENANTS}/doomed`)).status === 404, { message: 'the Tenant gone', timeoutMs: 120_000 });
    } finally {
      await query(c.url, 'DROP TRIGGER hold_arrival ON tenants; DROP FUNCTION hold_arrival()');
      await query(b.url, 'DROP TRIGGER slow_purge ON objects; DROP FUNCTION slow_purge()');
    }
    // Once the Tenant is gone, no shard holds anything of it (a copy left on c would be adopted by the next tenant).
    const left: Record<string, number> = {};
    for (const [shard, url] of Object.entries(everywhere())) left[shard] = await rowsOf(url, 'doomed');
    assert.deepEqual(left, { default: 0, b: 0, c: 0 }, 'rows of the deleted tenant per shard');

    // A new customer gets the name, placed on the shard the copy was going to.
    await request(s.url).post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'doomed' }, spec: { shard: 'c' } }).expect(201);
    await eventually(async () => (await request(s.url).get(`${TENANTS}/doomed`)).body.status?.phase === 'Active', { message: 'the new tenant ready', timeoutMs: 60_000 });
    const [{ uid }] = await query<{ uid: string }>(c.url, 'SELECT uid FROM tenants WHERE name = $1', ['doomed']);
    assert.notEqual(uid, oldUid, 'the new tenant has a uid of its own');
    const names = (await request(second.url).get(P).expect(200)).body.items.map((o: { metadata: { name: string } }) => o.metadata.name);
    assert.deepEqual(names.filter((n: string) => n.startsWith('old-')), [], 'nothing of the deleted tenant');
  });

  it('never lets a new tenant adopt rows an earlier tenant of its name left on a shard, and sweeps rows of tenants that live elsewhere', async () => {
    // Rows of an earlier "ghost" on shard c (as a deletion that missed a shard left them), and of "elsewhere" on c
    // while it lives on b (as a failed departure leaves them).
    const onC = createDatabase({ connectionString: c.url, maxConnections: 2 });
    try {
      await new TenantRepository(onC).ensure('ghost', 'uid-of-an-earlier-tenant');
      await new ObjectStoreRepository(onC).create({ tenant: 'ghost', resource: 'configmaps', namespace: 'default', name: 'earlier-secret' }, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'earlier-secret', namespace: 'default' } });
      await request(s.url).post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'elsewhere' }, spec: { shard: 'b' } }).expect(201);
      const elsewhereUid = (await request(s.url).get(`${TENANTS}/elsewhere`).expect(200)).body.metadata.uid as string;
      await new TenantRepository(onC).ensure('elsewhere', elsewhereUid);
      await new ObjectStoreRepository(onC).create({ tenant: 'elsewhere', resource: 'configmaps', namespace: 'default', name: 'stale-copy' }, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'stale-copy', namespace: 'default' } });
    } finally {
      await onC.destroy();
    }

    await request(s.url).post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'ghost' }, spec: { shard: 'c' } }).expect(201);
    const ghost = await eventually(async () => {
      const t = (await request(s.url).get(`${TENANTS}/ghost`)).body;
      return t.status?.phase === 'Active' ? t : false;
    }, { message: 'the new ghost ready', timeoutMs: 60_000 });
    await request(second.url).get('/clusters/ghost/api/v1/namespaces/default/configmaps/earlier-secret').expect(404);
    const [row] = await query<{ object_uid: string }>(c.url, 'SELECT object_uid FROM tenants WHERE name = $1', ['ghost']);
    assert.equal(row.object_uid, ghost.metadata.uid, 'the row is the new Tenant\'s own');

    // The sweep (the mover's leader runs it every 30 s; here, by hand): a row is removed when two sweeps agree.
    // (The leader's own timer may have seen it once already: the count is checked over both replicas.)
    const sweep = s.app.get(TenantMover).sweep;
    await sweep.run();
    await sweep.run();
    assert.equal(await rowsOf(c.url, 'elsewhere'), 0, 'the stale copy on c removed');
    assert.ok((await rowsOf(b.url, 'elsewhere')) > 0, 'the tenant where it lives untouched');
    await request(second.url).get('/clusters/elsewhere/api/v1/namespaces/default/configmaps').expect(200);
    assert.ok((await rowsOf(c.url, 'ghost')) > 0, 'the new ghost untouched');
    let removed = 0;
    for (const r of [s, second]) removed += Number(/plinth_tenant_leftovers_total\{action="remove"\} (\d+)/.exec((await request(r.url).get('/metrics').expect(200)).text)?.[1] ?? 0);
    assert.ok(removed >= 1, 'the removal counted in plinth_tenant_leftovers_total');
  });
});
