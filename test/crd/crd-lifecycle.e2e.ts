import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import request from 'supertest';
import { loadConfig } from '../../apps/api/src/config/app-config.js';
import { startServer } from '../../apps/api/src/app/server.js';
import { sharedTestDataDir } from '../support/credentials.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { installCrd, widgetCrd } from './crd-fixtures.js';
import { eventually } from '../support/eventually.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

describe('CustomResourceDefinition lifecycle', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;

  before(async () => {
    s = await startTestServer('crd-lifecycle', { PLINTH_TENANTS: 'acme,zeta' });
    api = request(s.url);
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'demo' } }).expect(201);
  });
  after(async () => s.close());

  it('advertises customresourcedefinitions in /apis, the group and v1 (checklist 23)', async () => {
    const groups = await api.get('/apis').expect(200);
    assert.ok(groups.body.groups.some((g: { name: string }) => g.name === 'apiextensions.k8s.io'));
    const group = await api.get('/apis/apiextensions.k8s.io').expect(200);
    assert.equal(group.body.preferredVersion.groupVersion, 'apiextensions.k8s.io/v1');
    const v1 = await api.get('/apis/apiextensions.k8s.io/v1').expect(200);
    const crd = v1.body.resources.find((r: { name: string }) => r.name === 'customresourcedefinitions');
    assert.equal(crd.kind, 'CustomResourceDefinition');
    assert.equal(crd.namespaced, false);
    assert.deepEqual(crd.shortNames, ['crd', 'crds']);
    assert.ok(v1.body.resources.some((r: { name: string }) => r.name === 'customresourcedefinitions/status'));
  });

  it('creates a CRD: defaults, finalizer, storedVersions, then NamesAccepted and Established', async () => {
    const body = widgetCrd({ shortNames: ['wd'] }) as { spec: { names: Record<string, unknown> } };
    delete body.spec.names.singular;
    delete body.spec.names.listKind;
    const res = await api.post(CRDS).send(body).expect(201);
    assert.equal(res.body.spec.names.singular, 'widget');
    assert.equal(res.body.spec.names.listKind, 'WidgetList');
    assert.deepEqual(res.body.spec.conversion, { strategy: 'None' });
    assert.deepEqual(res.body.status.storedVersions, ['v1']);
    assert.deepEqual(res.body.metadata.finalizers, ['customresourcecleanup.apiextensions.k8s.io']);
    assert.equal(res.body.metadata.generation, 1);
    const crd = await eventually(async () => {
      const got = await api.get(`${CRDS}/widgets.example.com`).expect(200);
      return got.body.status.conditions?.some((c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True') ? got.body : false;
    }, { timeoutMs: 5000 });
    const names = crd.status.conditions.find((c: { type: string }) => c.type === 'NamesAccepted');
    assert.deepEqual([names.status, names.reason, names.message], ['True', 'NoConflicts', 'no conflicts found']);
    const est = crd.status.conditions.find((c: { type: string }) => c.type === 'Established');
    assert.deepEqual([est.reason, est.message], ['InitialNamesAccepted', 'the initial names have been accepted']);
    assert.equal(crd.status.acceptedNames.kind, 'Widget');
    assert.deepEqual(crd.status.acceptedNames.shortNames, ['wd']);
  });

  it('serves the new resource and lists it in discovery (legacy and aggregated)', async () => {
    await eventually(async () => (await api.get('/apis/example.com/v1/namespaces/demo/widgets')).status === 200, { timeoutMs: 5000 });
    const list = await api.get('/apis/example.com/v1').expect(200);
    const w = list.body.resources.find((r: { name: string }) => r.name === 'widgets');
    assert.deepEqual([w.kind, w.singularName, w.namespaced], ['Widget', 'widget', true]);
    assert.deepEqual(w.shortNames, ['wd']);
    const agg = await api.get('/apis').set('Accept', AGGREGATED).expect(200);
    const item = agg.body.items.find((i: { metadata: { name: string } }) => i.metadata.name === 'example.com');
    assert.equal(item.versions[0].resources[0].resource, 'widgets');
    const created = await api.post('/apis/example.com/v1/namespaces/demo/widgets').send({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 3 } }).expect(201);
    assert.equal(created.body.spec.replicas, 1, 'default applied');
    assert.equal(created.body.metadata.generation, 1);
  });

  it('publishes the CR schema in OpenAPI v2 equal to the CRD schema (checklist 25)', async () => {
    const first = await api.get('/openapi/v2').expect(200);
    const etag = first.headers.etag;
    assert.ok(etag);
    await api.get('/openapi/v2').set('If-None-Match', etag).expect(304);
    const def = structuredClone(first.body.definitions['com.example.v1.Widget']);
    assert.deepEqual(def['x-kubernetes-group-version-kind'], [{ group: 'example.com', kind: 'Widget', version: 'v1' }]);
    delete def['x-kubernetes-group-version-kind'];
    for (const p of ['metadata', 'apiVersion', 'kind']) delete def.properties[p];
    const crd = await api.get(`${CRDS}/widgets.example.com`).expect(200);
    assert.deepEqual(def, crd.body.spec.versions[0].schema.openAPIV3Schema);
    const v3 = await api.get('/openapi/v3').expect(200);
    assert.ok(v3.body.paths['apis/example.com/v1']);
  });

  it('reports conflicting names in NamesAccepted instead of failing', async () => {
    await api.post(CRDS).send(widgetCrd({ plural: 'gadgets', kind: 'Widget' })).expect(201);
    const crd = await eventually(async () => {
      const got = await api.get(`${CRDS}/gadgets.example.com`).expect(200);
      return got.body.status.conditions?.length ? got.body : false;
    }, { timeoutMs: 5000 });
    const names = crd.status.conditions.find((c: { type: string }) => c.type === 'NamesAccepted');
    // As upstream, the last conflicting name checked (kind, then listKind) is the one reported.
    assert.deepEqual([names.status, names.reason, names.message], ['False', 'ListKindConflict', '"WidgetList" is already in use']);
    const est = crd.status.conditions.find((c: { type: string }) => c.type === 'Established');
    assert.equal(est.status, 'False');
    await api.get('/apis/example.com/v1/namespaces/demo/gadgets').expect(404);
  });

  it('validates names with upstream messages', async () => {
    const bad = widgetCrd({ plural: 'Bad_Plural', kind: 'widget kind' }) as { metadata: { name: string }; spec: { names: Record<string, unknown> } };
    bad.metadata.name = 'nope.example.com';
    bad.spec.names.listKind = 'widget kind';
    bad.spec.names.shortNames = ['ok', 'NOT OK'];
    const res = await api.post(CRDS).send(bad).expect(422);
    assert.equal(res.body.reason, 'Invalid');
    assert.match(res.body.message, /^CustomResourceDefinition\.apiextensions\.k8s\.io "nope\.example\.com" is invalid: \[/);
    assert.match(res.body.message, /metadata\.name: Invalid value: "nope\.example\.com": must be spec\.names\.plural\+"\."\+spec\.group/);
    assert.match(res.body.message, /spec\.names\.plural: Invalid value: "Bad_Plural": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character/);
    assert.match(res.body.message, /spec\.names\.kind: Invalid value: "widget kind": may have mixed case, but should otherwise match: /);
    assert.match(res.body.message, /spec\.names\.shortNames\[1\]: Invalid value: "NOT OK"/);
    assert.match(res.body.message, /spec\.names\.listKind: Invalid value: "widget kind": kind and listKind may not be the same/);
    const scope = widgetCrd({ plural: 'things' }) as { spec: Record<string, unknown> };
    scope.spec.scope = 'Galaxy';
    const r2 = await api.post(CRDS).send(scope).expect(422);
    assert.match(r2.body.message, /spec\.scope: Unsupported value: "Galaxy": supported values: "Cluster", "Namespaced"/);
    const group = widgetCrd({ plural: 'things', group: 'nodot' });
    const r3 = await api.post(CRDS).send(group).expect(422);
    assert.match(r3.body.message, /spec\.group: Invalid value: "nodot": should be a domain with at least one dot/);
  });

  it('lists CRDs by label selector and deletes a labelled collection (checklist 20)', async () => {
    for (const n of ['alpha', 'beta', 'gamma']) {
      await api.post(CRDS).send(widgetCrd({ plural: `${n}s`, kind: `${n[0].toUpperCase()}${n.slice(1)}`, group: 'sel.example.com', labels: { e2e: n === 'gamma' ? 'other' : 'mine' } })).expect(201);
    }
    const mine = await api.get(`${CRDS}?labelSelector=e2e%3Dmine`).expect(200);
    assert.deepEqual(mine.body.items.map((i: { metadata: { name: string } }) => i.metadata.name).sort(), ['alphas.sel.example.com', 'betas.sel.example.com']);
    await api.delete(`${CRDS}?labelSelector=e2e%3Dmine`).expect(200);
    await eventually(async () => (await api.get(`${CRDS}?labelSelector=e2e%3Dmine`)).body.items.length === 0, { timeoutMs: 5000, message: 'labelled CRDs gone' });
    await api.get(`${CRDS}/gammas.sel.example.com`).expect(200);
  });

  it('serves /status: GET, PUT and PATCH are visible to later GETs (checklist 21)', async () => {
    const name = 'gammas.sel.example.com';
    await eventually(async () => (await api.get(`${CRDS}/${name}/status`)).body.status?.conditions?.length > 0, { timeoutMs: 5000 });
    const got = await api.get(`${CRDS}/${name}/status`).expect(200);
    got.body.status.conditions.push({ type: 'E2E', status: 'True', reason: 'Testing', message: 'put', lastTransitionTime: '2024-01-01T00:00:00Z' });
    got.body.spec.group = 'ignored.example.com';
    const put = await api.put(`${CRDS}/${name}/status`).send(got.body).expect(200);
    assert.equal(put.body.spec.group, 'sel.example.com', 'spec is kept on /status');
    assert.ok(put.body.status.conditions.some((c: { type: string }) => c.type === 'E2E'));
    await api
      .patch(`${CRDS}/${name}/status`)
      .set('Content-Type', 'application/merge-patch+json')
      .send({ status: { storedVersions: ['v1'], conditions: [...put.body.status.conditions.filter((c: { type: string }) => c.type !== 'E2E'), { type: 'Patched', status: 'True', reason: 'P', message: 'patched', lastTransitionTime: '2024-01-01T00:00:00Z' }] } })
      .expect(200);
    const after = await api.get(`${CRDS}/${name}`).expect(200);
    assert.ok(after.body.status.conditions.some((c: { type: string }) => c.type === 'Patched'));
    assert.ok(!after.body.status.conditions.some((c: { type: string }) => c.type === 'E2E'));
  });

  it('keeps tenants apart: same group and kind with different schemas', async () => {
    const a = widgetCrd({ group: 'tenant.example.com', schema: { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string' } } } } } });
    const z = widgetCrd({ group: 'tenant.example.com', schema: { type: 'object', properties: { spec: { type: 'object', properties: { z: { type: 'integer' } } } } } });
    await installCrd(api, a, '/clusters/acme');
    await installCrd(api, z, '/clusters/zeta');
    for (const t of ['acme', 'zeta']) await api.post(`/clusters/${t}/api/v1/namespaces`).send({ metadata: { name: 'demo' } }).expect(201);
    const ra = await api.post('/clusters/acme/apis/tenant.example.com/v1/namespaces/demo/widgets?fieldValidation=Strict').send({ metadata: { name: 'x' }, spec: { a: 'text' } }).expect(201);
    assert.equal(ra.body.spec.a, 'text');
    const rz = await api.post('/clusters/zeta/apis/tenant.example.com/v1/namespaces/demo/widgets?fieldValidation=Strict').send({ metadata: { name: 'x' }, spec: { a: 'text' } }).expect(400);
    assert.match(rz.body.message, /unknown field "spec\.a"/);
    await api.get('/apis/tenant.example.com/v1/namespaces/demo/widgets').expect(404);
    const crdsInDefault = await api.get(CRDS).expect(200);
    assert.ok(!crdsInDefault.body.items.some((i: { spec: { group: string } }) => i.spec.group === 'tenant.example.com'));
  });

  it('a second replica on the same database serves a new CRD without a restart (its change stream, not a poll)', async () => {
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: s.database.url, PLINTH_DB_POOL_SIZE: '4', PLINTH_DATA_DIR: sharedTestDataDir() });
    const replica = await startServer(config, pino({ level: 'silent' }));
    try {
      const other = request(replica.url);
      await other.get('/apis/replica.example.com/v1/namespaces/demo/widgets').expect(404);
      await api.post(CRDS).send(widgetCrd({ group: 'replica.example.com' })).expect(201);
      await eventually(async () => (await other.get('/apis/replica.example.com/v1/namespaces/demo/widgets')).status === 200, { timeoutMs: 15_000, message: 'served on the replica' });
      const disc = await other.get('/apis/replica.example.com/v1').expect(200);
      assert.equal(disc.body.resources[0].name, 'widgets');
      await api.post('/apis/replica.example.com/v1/namespaces/demo/widgets').send({ metadata: { name: 'r1' }, spec: { size: 1 } }).expect(201);
      const got = await other.get('/apis/replica.example.com/v1/namespaces/demo/widgets/r1').expect(200);
      assert.equal(got.body.spec.replicas, 1);
    } finally {
      await replica.stop();
    }
  });

  it('deleting a CRD deletes its instances, then the CRD, then it leaves discovery and OpenAPI', async () => {
    await api.post('/apis/example.com/v1/namespaces/demo/widgets').send({ metadata: { name: 'w2' }, spec: { size: 4 } }).expect(201);
    const del = await api.delete(`${CRDS}/widgets.example.com`);
    assert.ok([200, 202].includes(del.status));
    assert.ok(del.body.metadata.deletionTimestamp);
    await eventually(async () => (await api.get(`${CRDS}/widgets.example.com`)).status === 404, { timeoutMs: 8000, message: 'CRD removed' });
    await eventually(async () => {
      const r = await api.get('/apis/example.com/v1');
      return r.status === 404 || !r.body.resources.some((x: { name: string }) => x.name === 'widgets');
    }, { timeoutMs: 3000, message: 'widgets gone from discovery' });
    const v2 = await api.get('/openapi/v2').expect(200);
    assert.equal(v2.body.paths['/apis/example.com/v1/namespaces/{namespace}/widgets'], undefined);
    await api.delete(`${CRDS}/gadgets.example.com`).expect((r) => assert.ok(r.status < 300));
    await eventually(async () => (await api.get(`${CRDS}/gadgets.example.com`)).status === 404, { timeoutMs: 8000, message: 'gadgets removed' });
    await installCrd(api, widgetCrd());
    const list = await api.get('/apis/example.com/v1/namespaces/demo/widgets').expect(200);
    assert.deepEqual(list.body.items, [], 'instances were removed with the CRD');
  });
});
