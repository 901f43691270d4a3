import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { eventually } from '../support/eventually.js';
import { conditionOf, query, registerShard, type ShardedSetup, SHARDS, startShardedReplicas, TENANTS } from './support/shards.js';
import type { TestPostgres } from '../support/test-postgres.js';
import type { TestServer } from '../support/test-server.js';

const SECRETS = '/api/v1/namespaces/default/secrets';

/** The tenants that have a row in `url`'s tenants table (other than the platform tenant every shard has). */
async function tenantRowsOn(url: string): Promise<string[]> {
  return (await query<{ name: string }>(url, "SELECT name FROM tenants WHERE name <> 'default' ORDER BY name")).map((r) => r.name);
}

// Three PostgreSQL servers: the platform's own (the runner's, shard "default") and two more registered as Shards.
describe('shards: tenants spread over several PostgreSQL servers', { timeout: 240_000 }, () => {
  let setup: ShardedSetup;
  let s: TestServer;
  let second: TestServer;
  let b: TestPostgres;
  let c: TestPostgres;
  const home = new Map<string, string>();

  before(async () => {
    setup = await startShardedReplicas('shards');
    ({ s, second, b, c } = setup);
  });
  after(async () => setup?.close());

  it('registers shards from Secrets (the password never shown), and kubectl get shards shows them', async () => {
    const shard = (await request(s.url).get(`${SHARDS}/b`).expect(200)).body;
    assert.equal(conditionOf(shard, 'Ready')?.status, 'True');
    assert.doesNotMatch(JSON.stringify(shard), /plinth@|:plinth/);
    const out = await kubectl(writeTestKubeconfig(s.url), ['get', 'shards']);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /^NAME\s+READY\s+TENANTS\s+OBJECTS\s+SIZE\s+AGE/m);
    for (const name of ['b', 'c', 'default']) assert.match(out.stdout, new RegExp(`^${name}\\s+True\\s+\\d+`, 'm'));
    // A lone PostgreSQL (no synchronous standby): the shard says an acknowledged write may be lost with its primary.
    const durable = await eventually(async () => {
      const c = conditionOf((await request(s.url).get(`${SHARDS}/b`).expect(200)).body, 'SurvivesPrimaryLoss');
      assert.ok(c, 'the SurvivesPrimaryLoss condition');
      return c;
    }, { timeoutMs: 20_000, intervalMs: 250 });
    assert.equal(durable.status, 'False');
    assert.equal(durable.reason, 'NoSynchronousStandby');
    assert.match(durable.message ?? '', /^acknowledged writes may be lost with the primary \(synchronous_standby_names is empty/);
    const wide = await kubectl(writeTestKubeconfig(s.url), ['get', 'shards', 'b', '-o', 'wide']);
    assert.equal(wide.code, 0, wide.stderr);
    assert.match(wide.stdout, /^b\s+True\s+.*\s+False$/m);
  });

  it('places new tenants on the ready shards with the fewest bytes and tenants, and stores their rows only there', async () => {
    for (const name of ['t1', 't2', 't3', 't4', 't5', 't6']) {
      const created = (await request(s.url).post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name }, spec: { owners: [{ kind: 'User', name: 'alice' }] } }).expect(201)).body;
      assert.equal(created.spec.shard, created.status.shard);
      home.set(name, created.status.shard);
    }
    // The platform's shard holds the platform's own objects; b and c start empty: new tenants go to them (equal
    // bytes: the one with fewer tenants; then the one whose status reports fewer bytes), never to the fuller one.
    assert.deepEqual([...new Set(home.values())].sort(), ['b', 'c'], `spread: ${JSON.stringify([...home])}`);
    assert.deepEqual([home.get('t1'), home.get('t2')], ['b', 'c'], 'two empty shards: by tenants, then by name');
    const onB = [...home].filter(([, sh]) => sh === 'b').map(([t]) => t);
    const onC = [...home].filter(([, sh]) => sh === 'c').map(([t]) => t);
    assert.deepEqual(await tenantRowsOn(b.url), onB.sort());
    assert.deepEqual(await tenantRowsOn(c.url), onC.sort());
  });

  it('serves every tenant from every replica, with resourceVersions from its own shard', async () => {
    for (const [tenant] of home) {
      const P = `/clusters/${tenant}/api/v1/namespaces/default/configmaps`;
      const made = (await request(s.url).post(P).send({ metadata: { name: 'cm' }, data: { t: tenant } }).expect(201)).body;
      const seen = (await request(second.url).get(`${P}/cm`).expect(200)).body;
      assert.equal(seen.data.t, tenant);
      assert.equal(seen.metadata.resourceVersion, made.metadata.resourceVersion);
    }
    // A tenant's revision is its shard's counter: shard b's counter has seen it.
    const tB = [...home].find(([, sh]) => sh === 'b')![0];
    const rv = Number((await request(s.url).get(`/clusters/${tB}/api/v1/namespaces/default/configmaps/cm`).expect(200)).body.metadata.resourceVersion);
    const rows = await query<{ revision: string }>(b.url, 'SELECT revision FROM objects WHERE tenant = $1 AND name = $2', [tB, 'cm']);
    assert.equal(Number(rows[0].revision), rv);
  });

  it('delivers watch events of tenants on other shards on both replicas', async () => {
    const tC = [...home].find(([, sh]) => sh === 'c')![0];
    const P = `/clusters/${tC}/api/v1/namespaces/default/configmaps`;
    const list = (await request(second.url).get(P).expect(200)).body;
    const events: string[] = [];
    const req = request(second.url)
      .get(`${P}?watch=1&resourceVersion=${list.metadata.resourceVersion}`)
      .buffer(false)
      .parse((res, cb) => {
        res.setEncoding('utf8');
        res.on('data', (d: string) => events.push(...d.split('\n').filter(Boolean)));
        res.on('end', () => cb(null, null));
      });
    const done = req.then(() => undefined, () => undefined);
    await new Promise((r) => setTimeout(r, 300));
    const made = (await request(s.url).post(P).send({ metadata: { name: 'watched' } }).expect(201)).body;
    const line = await eventually(async () => events.find((e) => e.includes('"watched"')) ?? false, { message: 'the ADDED event on the other replica', timeoutMs: 60_000 });
    const ev = JSON.parse(line);
    assert.equal(ev.type, 'ADDED');
    assert.equal(ev.object.metadata.resourceVersion, made.metadata.resourceVersion);
    req.abort();
    await done;
  });

  it('refuses to delete a shard that tenants live on (409 naming them), and bad placements', async () => {
    const del = await request(s.url).delete(`${SHARDS}/b`).expect(409);
    const onB = [...home].filter(([, sh]) => sh === 'b').map(([t]) => t);
    for (const t of onB) assert.match(del.body.message, new RegExp(`\\b${t}\\b`));
    const unknown = await request(s.url).post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'lost' }, spec: { shard: 'nowhere' } }).expect(422);
    assert.deepEqual(unknown.body.details.causes.map((x: { field: string }) => x.field), ['spec.shard']);
    { const r = await request(s.url).patch(`${SHARDS}/c`).set('Content-Type', 'application/merge-patch+json').send({ spec: { unschedulable: true } }); assert.equal(r.status, 200, JSON.stringify(r.body)); }
    const cordoned = await request(s.url).post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'cordoned' }, spec: { shard: 'c' } }).expect(409);
    assert.match(cordoned.body.message, /cordoned/);
    const placed = (await request(s.url).post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'avoids-c' }, spec: {} }).expect(201)).body;
    assert.notEqual(placed.status.shard, 'c');
    await request(s.url).patch(`${SHARDS}/c`).set('Content-Type', 'application/merge-patch+json').send({ spec: { unschedulable: false } }).expect(200);
  });

  it('reports a shard whose password is wrong as not ready, naming the host and never the password', async () => {
    const wrong = new URL(b.url);
    wrong.password = 'not-the-password';
    await registerShard(s.url, 'badpass', wrong.toString());
    const shard = await eventually(async () => {
      const res = await request(s.url).get(`${SHARDS}/badpass`);
      const ready = conditionOf(res.body, 'Ready');
      return ready?.status === 'False' && ready.message !== 'not connected yet' ? res.body : false;
    }, { message: 'badpass Ready=False with a message', timeoutMs: 60_000 });
    assert.doesNotMatch(JSON.stringify(shard), /not-the-password/);
    assert.match(conditionOf(shard, 'Ready')!.message, new RegExp(decodeURIComponent(new URL(b.url).searchParams.get('host') ?? 'localhost').replace(/[/.]/g, '.')));
    await request(s.url).delete(`/api/v1/namespaces/default/secrets/shard-badpass`).expect(200);
    await eventually(async () => {
      const ready = conditionOf((await request(s.url).get(`${SHARDS}/badpass`)).body, 'Ready');
      return ready?.message.includes('Secret default/shard-badpass not found') ? true : false;
    }, { message: 'the missing Secret in the condition', timeoutMs: 60_000 });
    await request(s.url).delete(`${SHARDS}/badpass`).expect(200);
  });

  it('when one shard is down, only its tenants get 503 with Retry-After; the others and readyz carry on; it recovers without a restart', async () => {
    const tB = [...home].find(([, sh]) => sh === 'b')![0];
    const tC = [...home].find(([, sh]) => sh === 'c')![0];
    await c.kill();
    // The first requests may meet the dead connections themselves (503, "storage backend unavailable"); within a probe
    // interval the shard is known down and its tenants are refused at once, naming it. Never anything but 200 or 503.
    const refused = await eventually(async () => {
      const res = await request(s.url).get(`/clusters/${tC}/api/v1/namespaces/default/configmaps`);
      assert.ok(res.status === 200 || res.status === 503, `${res.status} ${res.text}`);
      return res.status === 503 && /shard "c"/.test(res.body.message) ? res : false;
    }, { message: '503 naming the dead shard', timeoutMs: 60_000 });
    assert.equal(refused.body.reason, 'ServiceUnavailable');
    assert.equal(refused.headers['retry-after'], '1');
    assert.match(refused.body.message, /shard "c"/);
    for (const url of [s.url, second.url]) {
      const read = await request(url).get(`/clusters/${tB}/api/v1/namespaces/default/configmaps/cm`);
      assert.equal(read.status, 200, read.text);
      const write = await request(url).post(`/clusters/${tB}/api/v1/namespaces/default/configmaps`).send({ metadata: { generateName: 'while-c-down-' } });
      assert.equal(write.status, 201, write.text);
      const platform = await request(url).get('/api/v1/namespaces');
      assert.equal(platform.status, 200, platform.text);
    }
    const ready = await request(s.url).get('/readyz?verbose').expect(200);
    assert.match(ready.text, /\[\+\]shard-c ok \(degraded: .*its tenants get 503\)/);
    assert.match(ready.text, /\[\+\]shard-b ok/);
    await c.restart();
    // Each replica sees the shard back at its next probe: until then its tenants still get 503, never anything else.
    for (const url of [second.url, s.url]) {
      await eventually(async () => {
        const res = await request(url).get(`/clusters/${tC}/api/v1/namespaces/default/configmaps/cm`);
        assert.ok(res.status === 200 || res.status === 503, `${res.status} ${res.text}`);
        return res.status === 200;
      }, { message: 'the tenant of the restarted shard served again', timeoutMs: 60_000 });
    }
    await request(s.url).post(`/clusters/${tC}/api/v1/namespaces/default/configmaps`).send({ metadata: { name: 'after-restart' } }).expect(201);
  });
});
