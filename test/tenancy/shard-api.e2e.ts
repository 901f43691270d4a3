import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { eventually } from '../support/eventually.js';
import { kubectl, type KubectlResult, writeTestKubeconfig } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const SHARDS = '/apis/tenancy.plinth.dev/v1beta1/shards';
const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const URL_IN_SECRET = 'postgres://plinth:s3cret-pw@127.0.0.1:1/plinth';

function ok(r: KubectlResult): string {
  assert.equal(r.code, 0, `kubectl failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

const eastYaml = `apiVersion: tenancy.plinth.dev/v1beta1
kind: Shard
metadata:
  name: east
spec:
  secretRef:
    name: east-db
    namespace: default
`;

const causesOf = (body: { details: { causes: { field: string; reason: string }[] } }): string[] =>
  body.details.causes.map((c) => `${c.reason} ${c.field}`).sort();

// The API surface of Shards (issue 25 items 1-2): what the platform does with them (status, placement) is tested elsewhere.
describe('Shard objects (tenancy.plinth.dev/v1beta1)', () => {
  let s: TestServer;
  let kc: string;
  const k = (args: string[], input?: string) => kubectl(kc, args, input);

  before(async () => {
    s = await startTestServer('shard-api', { PLINTH_TENANTS: 'globex' });
    kc = writeTestKubeconfig(s.url);
  });
  after(async () => s.close());

  it('kubectl create -f shard.yaml registers a shard whose Secret holds the URL; the password is nowhere in it', async () => {
    ok(await k(['create', 'secret', 'generic', 'east-db', `--from-literal=url=${URL_IN_SECRET}`]));
    assert.equal(ok(await k(['create', '-f', '-'], eastYaml)).trim(), 'shard.tenancy.plinth.dev/east created');
    const raw = ok(await k(['get', 'shard', 'east', '-o', 'json']));
    const east = JSON.parse(raw);
    assert.deepEqual(east.spec.secretRef, { name: 'east-db', namespace: 'default', key: 'url' });
    assert.equal(east.metadata.generation, 1);
    assert.ok(!raw.includes('s3cret-pw'));
  });

  it('kubectl patch cordons a shard: spec.unschedulable, a new generation', async () => {
    assert.equal(ok(await k(['patch', 'shard', 'east', '-p', '{"spec":{"unschedulable":true}}'])).trim(), 'shard.tenancy.plinth.dev/east patched');
    const east = JSON.parse(ok(await k(['get', 'shard', 'east', '-o', 'json'])));
    assert.equal(east.spec.unschedulable, true);
    assert.equal(east.metadata.generation, 2);
    assert.equal(east.spec.secretRef.name, 'east-db');
  });

  it('kubectl get shards shows NAME, READY, TENANTS, OBJECTS, SIZE, AGE (and HOST with -o wide)', async () => {
    const out = ok(await k(['get', 'shards']));
    assert.match(out, /^NAME\s+READY\s+TENANTS\s+OBJECTS\s+SIZE\s+AGE$/m);
    assert.match(out, /^east\s+\S+/m);
    // The shard status controller writes READY on its next pass (every 3 s): until then it is Unknown.
    const wide = await eventually(
      async () => {
        const out = ok(await k(['get', 'shards', 'east', '-o', 'wide']));
        return /^east\s+Unknown\s/m.test(out) ? false : out;
      },
      { timeoutMs: 20_000, intervalMs: 500, message: 'the shard status controller writes READY for east' },
    );
    assert.match(wide, /^NAME\s+READY\s+TENANTS\s+OBJECTS\s+SIZE\s+AGE\s+HOST\s+SURVIVES-PRIMARY-LOSS$/m);
    // A shard never reached is not ready, and cannot say whether an acknowledged write survives the loss of its primary.
    assert.match(wide, /^east\s+False\s+.*\s+Unknown$/m);
  });

  it('kubectl explain shard.spec and shard.spec.secretRef describe the fields', async () => {
    const spec = ok(await k(['explain', 'shard.spec']));
    assert.match(spec, /GROUP:\s+tenancy\.plinth\.dev/);
    assert.match(spec, /VERSION:\s+v1beta1/);
    assert.match(spec, /^\s+secretRef\s+<Object>/m);
    assert.match(spec, /^\s+unschedulable\s+<boolean>/m);
    const ref = ok(await k(['explain', 'shard.spec.secretRef']));
    assert.match(ref, /^\s+name\s+<string> -required-/m);
    assert.match(ref, /^\s+namespace\s+<string> -required-/m);
    assert.match(ref, /^\s+key\s+<string>/m);
  });

  it('kubectl api-resources lists shards in the platform scope only; a tenant gets 404', async () => {
    assert.match(ok(await k(['api-resources'])), /^shards\s+tenancy\.plinth\.dev\/v1beta1\s+false\s+Shard$/m);
    await request(s.url).get(`/clusters/globex${SHARDS}`).expect(404);
    await request(s.url).post(`/clusters/globex${SHARDS}`).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Shard', metadata: { name: 'x' } }).expect(404);
  });

  it('refuses invalid specs with 422 and a cause per field', async () => {
    const res = await request(s.url)
      .post(SHARDS)
      .send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Shard', metadata: { name: 'bad' }, spec: { secretRef: { name: 'Not_A_Secret', key: 'a b' } } })
      .expect(422);
    assert.equal(res.body.reason, 'Invalid');
    assert.deepEqual(causesOf(res.body), ['FieldValueInvalid spec.secretRef.key', 'FieldValueInvalid spec.secretRef.name', 'FieldValueRequired spec.secretRef.namespace']);
    const none = await request(s.url).post(SHARDS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Shard', metadata: { name: 'bare' } }).expect(422);
    assert.deepEqual(causesOf(none.body), ['FieldValueRequired spec.secretRef']);
    await request(s.url).get(`${SHARDS}/bad`).expect(404);
  });

  it('refuses names that are not DNS-1123 labels, and default, the platform\'s own database', async () => {
    for (const name of ['a.b', 'Upper', 'default']) {
      const res = await request(s.url)
        .post(SHARDS)
        .send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Shard', metadata: { name }, spec: { secretRef: { name: 'east-db', namespace: 'default' } } });
      assert.equal(res.status, 422, name);
      assert.deepEqual(causesOf(res.body), ['FieldValueInvalid metadata.name'], name);
    }
  });

  it('keeps status server-owned on the main resource, and validates writes to shards/status', async () => {
    const res = await request(s.url)
      .post(SHARDS)
      .send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Shard', metadata: { name: 'west' }, spec: { secretRef: { name: 'east-db', namespace: 'default' } }, status: { host: 'forged:1/x' } })
      .expect(201);
    assert.notEqual(res.body.status?.host, 'forged:1/x');
    const bad = await request(s.url)
      .patch(`${SHARDS}/west/status`)
      .set('Content-Type', 'application/merge-patch+json')
      .send({ status: { tenants: -1, host: 'plinth:pw@db:5432/x' } })
      .expect(422);
    assert.deepEqual(causesOf(bad.body), ['FieldValueInvalid status.host', 'FieldValueInvalid status.tenants']);
    assert.ok(!JSON.stringify(bad.body).includes(':pw@'));
  });

  it('a Tenant accepts spec.shard naming a shard, shows SHARD with -o wide, and refuses a shard that is not a DNS-1123 label', async () => {
    const created = await request(s.url)
      .post(TENANTS)
      .send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'initech' }, spec: { shard: 'default' } })
      .expect(201);
    assert.equal(created.body.spec.shard, 'default');
    assert.match(ok(await k(['get', 'tenants', 'initech', '-o', 'wide'])), /^NAME\s+PHASE\s+OWNERS\s+AGE\s+URL\s+SHARD$/m);
    const res = await request(s.url)
      .post(TENANTS)
      .send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'hooli' }, spec: { shard: 'East_1' } })
      .expect(422);
    assert.deepEqual(causesOf(res.body), ['FieldValueInvalid spec.shard']);
    await request(s.url).get(`${TENANTS}/hooli`).expect(404);
  });

  it('kubectl delete shard removes it', async () => {
    assert.equal(ok(await k(['delete', 'shard', 'west'])).trim(), 'shard.tenancy.plinth.dev "west" deleted');
    await request(s.url).get(`${SHARDS}/west`).expect(404);
  });
});
