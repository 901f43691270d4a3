import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { kubectl, type KubectlResult, writeTestKubeconfig } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';

function ok(r: KubectlResult): string {
  assert.equal(r.code, 0, `kubectl failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

const acmeYaml = `apiVersion: tenancy.plinth.dev/v1beta1
kind: Tenant
metadata:
  name: acme
spec:
  owners:
  - kind: User
    name: alice
  - kind: Group
    name: acme-admins
  limits:
    objects: 10000
    objectsPerResource:
      configmaps: 5000
      crontabs.stable.example.com: 100
    bytes: 512Mi
    customResourceDefinitions: 20
    webhookConfigurations: 5
    concurrentRequests: 50
    requestsPerSecond: 100
`;

describe('Tenant objects (tenancy.plinth.dev/v1beta1)', () => {
  let s: TestServer;
  let kc: string;
  const k = (args: string[], input?: string) => kubectl(kc, args, input);

  before(async () => {
    s = await startTestServer('tenant-api', { PLINTH_TENANTS: 'globex' });
    kc = writeTestKubeconfig(s.url);
  });
  after(async () => s.close());

  it('has a Tenant object for the platform tenant and for each PLINTH_TENANTS name, Active with its URL', async () => {
    const res = await request(s.url).get(TENANTS).expect(200);
    assert.equal(res.body.kind, 'TenantList');
    const byName = new Map<string, { status: { phase: string; url: string } }>(res.body.items.map((t: { metadata: { name: string } }) => [t.metadata.name, t]));
    assert.deepEqual([...byName.keys()].sort(), ['default', 'globex']);
    assert.equal(byName.get('default')!.status.phase, 'Active');
    assert.equal(byName.get('default')!.status.url, s.url);
    assert.equal(byName.get('globex')!.status.url, `${s.url}/clusters/globex`);
  });

  it('kubectl create -f tenant.yaml makes a logical cluster usable at once, with its system namespaces', async () => {
    assert.equal(ok(await k(['create', '-f', '-'], acmeYaml)).trim(), 'tenant.tenancy.plinth.dev/acme created');
    const acme = writeTestKubeconfig(`${s.url}/clusters/acme`);
    const ns = ok(await kubectl(acme, ['get', 'ns', '-o', 'name']));
    assert.deepEqual(ns.trim().split('\n').sort(), ['namespace/default', 'namespace/kube-node-lease', 'namespace/kube-public', 'namespace/kube-system']);
    assert.equal(ok(await kubectl(acme, ['create', 'configmap', 'c1', '--from-literal=a=b'])).trim(), 'configmap/c1 created');
    const t = JSON.parse(ok(await k(['get', 'tenant', 'acme', '-o', 'json'])));
    assert.equal(t.status.phase, 'Active');
    assert.equal(t.status.url, `${s.url}/clusters/acme`);
    assert.deepEqual(t.metadata.finalizers, ['tenancy.plinth.dev/logical-cluster']);
    const ready = t.status.conditions.find((c: { type: string }) => c.type === 'Ready');
    assert.equal(ready.status, 'True');
    assert.equal(ready.observedGeneration, t.metadata.generation);
    assert.equal(t.spec.limits.bytes, '512Mi');
  });

  it('kubectl get tenants shows NAME, PHASE, OWNERS, AGE (and URL with -o wide)', async () => {
    const out = ok(await k(['get', 'tenants']));
    assert.match(out, /^NAME\s+PHASE\s+OWNERS\s+AGE$/m);
    assert.match(out, /^acme\s+Active\s+alice,group:acme-admins\s+\S+$/m);
    assert.match(out, /^default\s+Active\s+\S+$/m);
    const wide = ok(await k(['get', 'tenants', 'acme', '-o', 'wide']));
    assert.match(wide, /URL/);
    assert.ok(wide.includes(`${s.url}/clusters/acme`));
  });

  it('kubectl explain tenant.spec and tenant.spec.limits describe the fields', async () => {
    const spec = ok(await k(['explain', 'tenant.spec']));
    assert.match(spec, /GROUP:\s+tenancy\.plinth\.dev/);
    assert.match(spec, /owners\s+<\[\]Object>/);
    assert.match(spec, /limits\s+<Object>/);
    const limits = ok(await k(['explain', 'tenant.spec.limits']));
    for (const f of ['objects', 'objectsPerResource', 'bytes', 'customResourceDefinitions', 'webhookConfigurations', 'concurrentRequests', 'requestsPerSecond']) {
      assert.match(limits, new RegExp(`^\\s+${f}\\s+<`, 'm'), f);
    }
  });

  it('kubectl api-resources lists tenants in the platform scope only', async () => {
    assert.match(ok(await k(['api-resources'])), /^tenants\s+tenancy\.plinth\.dev\/v1beta1\s+false\s+Tenant$/m);
    const acme = writeTestKubeconfig(`${s.url}/clusters/acme`);
    assert.doesNotMatch(ok(await kubectl(acme, ['api-resources'])), /tenancy\.plinth\.dev/);
    await request(s.url).get(`/clusters/acme${TENANTS}`).expect(404);
    await request(s.url).get('/clusters/acme/apis/tenancy.plinth.dev/v1beta1').expect(404);
    const v2 = await request(s.url).get('/clusters/acme/openapi/v2').expect(200);
    assert.ok(!JSON.stringify(v2.body).includes('dev.plinth.tenancy'));
  });

  it('refuses invalid specs with 422 and a cause per field', async () => {
    const res = await request(s.url)
      .post(TENANTS)
      .send({
        apiVersion: 'tenancy.plinth.dev/v1beta1',
        kind: 'Tenant',
        metadata: { name: 'bad' },
        spec: {
          owners: [{ kind: 'Robot', name: 'r2' }, { kind: 'User', name: '' }, { kind: 'User', name: 'bob' }, { kind: 'User', name: 'bob' }],
          limits: { objects: -1, bytes: '1.5', concurrentRequests: 0, objectsPerResource: { 'Not_A_Resource': 3 } },
        },
      })
      .expect(422);
    assert.equal(res.body.reason, 'Invalid');
    const fields = res.body.details.causes.map((c: { field: string; reason: string }) => `${c.reason} ${c.field}`).sort();
    assert.deepEqual(fields, [
      'FieldValueDuplicate spec.owners[3]',
      'FieldValueInvalid spec.limits.bytes',
      'FieldValueInvalid spec.limits.concurrentRequests',
      'FieldValueInvalid spec.limits.objects',
      'FieldValueInvalid spec.limits.objectsPerResource',
      'FieldValueNotSupported spec.owners[0].kind',
      'FieldValueRequired spec.owners[1].name',
    ]);
    assert.equal((await request(s.url).get(`${TENANTS}/bad`)).status, 404);
  });

  it('refuses names that are not DNS-1123 labels, and the reserved name root', async () => {
    for (const name of ['a.b', 'Upper', 'root']) {
      const res = await request(s.url).post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name } });
      assert.equal(res.status, 422, name);
      assert.equal(res.body.details.causes[0].field, 'metadata.name');
    }
  });

  it('refuses fields of the wrong JSON type with 400, as typed kinds do', async () => {
    const res = await request(s.url)
      .post(TENANTS)
      .send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'typed' }, spec: { limits: { objects: 'many' } } })
      .expect(400);
    assert.match(res.body.message, /Tenant in version "v1beta1" cannot be handled as a Tenant/);
  });

  it('keeps status and the finalizer server-owned on update; a spec change bumps the generation and is provisioned again', async () => {
    const cur = (await request(s.url).get(`${TENANTS}/globex`).expect(200)).body;
    const res = await request(s.url)
      .put(`${TENANTS}/globex`)
      .send({ ...cur, metadata: { ...cur.metadata, finalizers: [] }, spec: { owners: [{ kind: 'User', name: 'carol' }] }, status: { phase: 'Terminating' } })
      .expect(200);
    assert.equal(res.body.status.phase, 'Active');
    assert.deepEqual(res.body.metadata.finalizers, ['tenancy.plinth.dev/logical-cluster']);
    assert.equal(res.body.metadata.generation, cur.metadata.generation + 1);
    // Provisioned again within the update itself: the answer already shows the new generation ready.
    const ready = res.body.status.conditions.find((c: { type: string }) => c.type === 'Ready');
    assert.equal(ready.status, 'True');
    assert.equal(ready.observedGeneration, res.body.metadata.generation);
  });

  it('refuses to delete the platform tenant with 403', async () => {
    const res = await request(s.url).delete(`${TENANTS}/default`).expect(403);
    assert.equal(res.body.message, 'tenants.tenancy.plinth.dev "default" is forbidden: this tenant may not be deleted');
  });

  it('creating a Tenant whose name exists answers 409 AlreadyExists', async () => {
    const res = await request(s.url).post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'acme' } }).expect(409);
    assert.equal(res.body.reason, 'AlreadyExists');
  });
});
