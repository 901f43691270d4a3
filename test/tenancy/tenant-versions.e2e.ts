import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';

const ALPHA = '/apis/tenancy.plinth.dev/v1alpha1/tenants';
const BETA = '/apis/tenancy.plinth.dev/v1beta1/tenants';

describe('tenancy.plinth.dev API levels: v1beta1 on by default, v1alpha1 (alpha) only when the runtime configuration enables it', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;

  before(async () => {
    s = await startTestServer('tenant-versions-default', { PLINTH_RUNTIME_CONFIG: '' });
    api = request(s.url);
  });
  after(async () => s.close());

  it('serves v1beta1 only: discovery, OpenAPI and requests agree', async () => {
    const group = await api.get('/apis/tenancy.plinth.dev').expect(200);
    assert.deepEqual(group.body.versions.map((v: { version: string }) => v.version), ['v1beta1']);
    assert.equal(group.body.preferredVersion.version, 'v1beta1');
    await api.get('/apis/tenancy.plinth.dev/v1alpha1').expect(404);
    await api.get(ALPHA).expect(404);
    await api.post(BETA).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'beta-one' }, spec: {} }).expect(201);
    const v2 = (await api.get('/openapi/v2').expect(200)).body;
    assert.ok(v2.definitions['dev.plinth.tenancy.v1beta1.Tenant']);
    assert.equal(v2.definitions['dev.plinth.tenancy.v1alpha1.Tenant'], undefined);
    const v3 = (await api.get('/openapi/v3').expect(200)).body;
    assert.ok(v3.paths['apis/tenancy.plinth.dev/v1beta1']);
    assert.equal(v3.paths['apis/tenancy.plinth.dev/v1alpha1'], undefined);
  });
});

describe('tenancy.plinth.dev with v1alpha1 enabled: both versions serve the same Tenant objects', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;

  before(async () => {
    s = await startTestServer('tenant-versions-alpha', { PLINTH_RUNTIME_CONFIG: 'tenancy.plinth.dev/v1alpha1=true' });
    api = request(s.url);
  });
  after(async () => s.close());

  it('lists both versions, v1beta1 preferred', async () => {
    const group = await api.get('/apis/tenancy.plinth.dev').expect(200);
    assert.deepEqual(group.body.versions.map((v: { version: string }) => v.version), ['v1beta1', 'v1alpha1']);
    assert.equal(group.body.preferredVersion.version, 'v1beta1');
  });

  it('round-trips an object written in one version through the other, every field kept', async () => {
    const spec = { owners: [{ kind: 'User', name: 'alice' }, { kind: 'Group', name: 'ops' }], limits: { objects: 500, objectsPerResource: { configmaps: 50 }, bytes: '10Mi', requestsPerSecond: 20 } };
    const created = await api.post(ALPHA).send({ apiVersion: 'tenancy.plinth.dev/v1alpha1', kind: 'Tenant', metadata: { name: 'acme', labels: { team: 'a' } }, spec }).expect(201);
    assert.equal(created.body.apiVersion, 'tenancy.plinth.dev/v1alpha1');
    const asBeta = (await api.get(`${BETA}/acme`).expect(200)).body;
    assert.equal(asBeta.apiVersion, 'tenancy.plinth.dev/v1beta1');
    assert.deepEqual(asBeta.spec, created.body.spec);
    assert.deepEqual([asBeta.metadata.uid, asBeta.metadata.labels], [created.body.metadata.uid, { team: 'a' }]);
    const updated = await api.put(`${BETA}/acme`).send({ ...asBeta, spec: { ...asBeta.spec, limits: { ...asBeta.spec.limits, objects: 600 } } }).expect(200);
    assert.equal(updated.body.apiVersion, 'tenancy.plinth.dev/v1beta1');
    const back = (await api.get(`${ALPHA}/acme`).expect(200)).body;
    assert.equal(back.apiVersion, 'tenancy.plinth.dev/v1alpha1');
    // Placement fills spec.shard in (the only shard here is the platform's own), as a scheduler binds a pod.
    assert.deepEqual(back.spec, { ...spec, limits: { ...spec.limits, objects: 600 }, shard: 'default' });
    assert.equal(back.metadata.resourceVersion, updated.body.metadata.resourceVersion);
    const lists = await Promise.all([api.get(ALPHA).expect(200), api.get(BETA).expect(200)]);
    assert.deepEqual(lists.map((l) => [l.body.apiVersion, l.body.items.find((t: { metadata: { name: string } }) => t.metadata.name === 'acme')?.apiVersion]), [
      ['tenancy.plinth.dev/v1alpha1', 'tenancy.plinth.dev/v1alpha1'],
      ['tenancy.plinth.dev/v1beta1', 'tenancy.plinth.dev/v1beta1'],
    ]);
  });

  it('keeps serving the tenant (its logical cluster) whichever version created it', async () => {
    await api.post(BETA).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'globex' }, spec: {} }).expect(201);
    for (const name of ['acme', 'globex']) {
      const t = (await api.get(`${ALPHA}/${name}`).expect(200)).body;
      assert.equal(t.status?.phase, 'Active');
      await api.get(`/clusters/${name}/api/v1/namespaces/default`).expect(200);
    }
  });
});
