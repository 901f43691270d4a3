import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { installCrd, widgetCrd, widgetSchema } from './crd-fixtures.js';
import { eventually } from '../support/eventually.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

describe('custom resource versions, subresources, printer columns and selectable fields', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;

  before(async () => {
    s = await startTestServer('crd-versions');
    api = request(s.url);
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'demo' } }).expect(201);
    const crd = widgetCrd({
      subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } },
      columns: [
        { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
        { name: 'Color', type: 'string', jsonPath: '.spec.color', priority: 1 },
        { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
      selectableFields: [{ jsonPath: '.spec.color' }],
    }) as { spec: { versions: Array<Record<string, unknown>> } };
    const schema = widgetSchema() as { properties: { status: { properties: Record<string, unknown> } } };
    schema.properties.status.properties.conditions = { type: 'array', items: { type: 'object', properties: { type: { type: 'string' }, status: { type: 'string' } } } };
    const v1 = { ...crd.spec.versions[0], schema: { openAPIV3Schema: schema } };
    const beta = { ...v1, name: 'v1beta1', storage: false, deprecated: true };
    crd.spec.versions = [beta, v1];
    await installCrd(api, crd);
  });
  after(async () => s.close());

  it('serves every version: apiVersion rewritten, deprecated version warns', async () => {
    const created = await api.post('/apis/example.com/v1beta1/namespaces/demo/widgets').send({ apiVersion: 'example.com/v1beta1', kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 2, color: 'red' } }).expect(201);
    assert.equal(created.body.apiVersion, 'example.com/v1beta1');
    assert.match(String(created.headers.warning), /299 - "example\.com\/v1beta1 Widget is deprecated; use example\.com\/v1 Widget"/);
    const viaV1 = await api.get('/apis/example.com/v1/namespaces/demo/widgets/w1').expect(200);
    assert.equal(viaV1.body.apiVersion, 'example.com/v1');
    assert.equal(viaV1.headers.warning, undefined);
    const list = await api.get('/apis/example.com/v1beta1/namespaces/demo/widgets').expect(200);
    assert.equal(list.body.apiVersion, 'example.com/v1beta1');
    assert.equal(list.body.items[0].apiVersion, 'example.com/v1beta1');
    const patched = await api.patch('/apis/example.com/v1/namespaces/demo/widgets/w1').set('Content-Type', 'application/merge-patch+json').send({ spec: { size: 3 } }).expect(200);
    assert.equal(patched.body.apiVersion, 'example.com/v1');
    const disc = await api.get('/apis/example.com').expect(200);
    assert.equal(disc.body.preferredVersion.version, 'v1');
  });

  it('tracks storedVersions and keeps old objects readable after a storage switch; unserved versions disappear (checklist 26)', async () => {
    const crd = (await api.get(`${CRDS}/widgets.example.com`).expect(200)).body;
    crd.spec.versions[0].storage = true;
    crd.spec.versions[1].storage = false;
    const upd = await api.put(`${CRDS}/widgets.example.com`).send(crd).expect(200);
    assert.deepEqual(upd.body.status.storedVersions, ['v1', 'v1beta1']);
    await api.post('/apis/example.com/v1beta1/namespaces/demo/widgets').send({ metadata: { name: 'w-new' }, spec: { size: 1 } }).expect(201);
    for (const v of ['v1', 'v1beta1']) {
      const r = await api.get(`/apis/example.com/${v}/namespaces/demo/widgets`).expect(200);
      assert.deepEqual(r.body.items.map((i: { apiVersion: string }) => i.apiVersion), [`example.com/${v}`, `example.com/${v}`]);
    }
    const cur = (await api.get(`${CRDS}/widgets.example.com`).expect(200)).body;
    cur.spec.versions[0].served = false;
    cur.spec.versions[0].storage = false;
    cur.spec.versions[1].storage = true;
    await api.put(`${CRDS}/widgets.example.com`).send(cur).expect(200);
    await eventually(async () => (await api.get('/apis/example.com/v1beta1/namespaces/demo/widgets')).status === 404, { timeoutMs: 5000, message: 'v1beta1 unserved' });
    const v2 = await api.get('/openapi/v2').expect(200);
    assert.equal(v2.body.definitions['com.example.v1beta1.Widget'], undefined);
    assert.ok(v2.body.definitions['com.example.v1.Widget']);
    const w1 = await api.get('/apis/example.com/v1/namespaces/demo/widgets/w-new').expect(200);
    assert.equal(w1.body.apiVersion, 'example.com/v1');
  });

  it('status subresource: main writes ignore status, /status writes ignore the rest, generation follows spec', async () => {
    const W = '/apis/example.com/v1/namespaces/demo/widgets';
    const c = await api.post(W).send({ metadata: { name: 's1' }, spec: { size: 1 }, status: { phase: 'Ignored' } }).expect(201);
    assert.equal(c.body.status, undefined);
    assert.equal(c.body.metadata.generation, 1);
    const st = await api.put(`${W}/s1/status`).send({ ...c.body, spec: { size: 9 }, status: { phase: 'Running', replicas: 2, selector: 'app=s1' } }).expect(200);
    assert.deepEqual([st.body.spec.size, st.body.status.phase, st.body.metadata.generation], [1, 'Running', 1]);
    const main = await api.patch(`${W}/s1`).set('Content-Type', 'application/merge-patch+json').send({ spec: { size: 4 }, status: { phase: 'Hacked' } }).expect(200);
    assert.deepEqual([main.body.spec.size, main.body.status.phase, main.body.metadata.generation], [4, 'Running', 2]);
    const meta = await api.patch(`${W}/s1`).set('Content-Type', 'application/merge-patch+json').send({ metadata: { labels: { a: 'b' } } }).expect(200);
    assert.equal(meta.body.metadata.generation, 2);
    const badStatus = await api.patch(`${W}/s1/status`).set('Content-Type', 'application/merge-patch+json').send({ status: { replicas: 'many' } }).expect(422);
    assert.match(badStatus.body.message, /status\.replicas: Invalid value: "string": status\.replicas in body must be of type integer: "string"/);
    const noRv = await api.put(`${W}/s1`).send({ metadata: { name: 's1' }, spec: { size: 1 } }).expect(422);
    assert.match(noRv.body.message, /metadata\.resourceVersion: Invalid value: .*must be specified for an update/);
  });

  it('scale subresource: autoscaling/v1 Scale through the CRD paths', async () => {
    const W = '/apis/example.com/v1/namespaces/demo/widgets';
    const disc = await api.get('/apis/example.com/v1').expect(200);
    const scale = disc.body.resources.find((r: { name: string }) => r.name === 'widgets/scale');
    assert.deepEqual([scale.group, scale.version ?? 'v1', scale.kind], ['autoscaling', 'v1', 'Scale']);
    const got = await api.get(`${W}/s1/scale`).expect(200);
    assert.deepEqual([got.body.kind, got.body.apiVersion, got.body.spec.replicas, got.body.status.replicas, got.body.status.selector], ['Scale', 'autoscaling/v1', 1, 2, 'app=s1']);
    const patched = await api.patch(`${W}/s1/scale`).set('Content-Type', 'application/merge-patch+json').send({ spec: { replicas: 5 } }).expect(200);
    assert.equal(patched.body.spec.replicas, 5);
    const obj = await api.get(`${W}/s1`).expect(200);
    assert.equal(obj.body.spec.replicas, 5);
    const put = await api.put(`${W}/s1/scale`).send({ ...patched.body, spec: { replicas: 3 } }).expect(200);
    assert.equal(put.body.spec.replicas, 3);
    const neg = await api.patch(`${W}/s1/scale`).set('Content-Type', 'application/merge-patch+json').send({ spec: { replicas: -1 } }).expect(422);
    assert.match(neg.body.message, /spec\.replicas: Invalid value: -1: must be greater than or equal to 0/);
    const stale = await api.put(`${W}/s1/scale`).send({ ...put.body, metadata: { ...put.body.metadata, resourceVersion: '1' }, spec: { replicas: 2 } }).expect(409);
    assert.equal(stale.body.reason, 'Conflict');
  });

  it('prints additionalPrinterColumns in Table output, with JSONPath filters and priority', async () => {
    const W = '/apis/example.com/v1/namespaces/demo/widgets';
    await api.patch(`${W}/s1/status`).set('Content-Type', 'application/merge-patch+json').send({ status: { conditions: [{ type: 'Ready', status: 'True' }] } }).expect(200);
    const t = await api.get(`${W}?limit=500`).set('Accept', TABLE).expect(200);
    assert.equal(t.body.kind, 'Table');
    assert.deepEqual(t.body.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'Size', 'Color', 'Ready', 'Age']);
    assert.equal(t.body.columnDefinitions[0].format, 'name');
    assert.equal(t.body.columnDefinitions[2].priority, 1);
    const row = t.body.rows.find((r: { cells: unknown[] }) => r.cells[0] === 's1');
    assert.equal(row.cells.length, 5);
    assert.equal(row.cells[1], 4);
    assert.equal(row.cells[2], null);
    assert.equal(row.cells[3], 'True');
    assert.match(String(row.cells[4]), /^\d+s$/);
    assert.equal(row.object.kind, 'PartialObjectMetadata');
  });

  it('gives CRs without printer columns the default Name and Age columns (checklist 71)', async () => {
    await installCrd(api, widgetCrd({ plural: 'plains', kind: 'Plain' }));
    await api.post('/apis/example.com/v1/namespaces/demo/plains').send({ metadata: { name: 'p1' }, spec: { size: 1 } }).expect(201);
    const t = await api.get('/apis/example.com/v1/namespaces/demo/plains').set('Accept', TABLE).expect(200);
    assert.deepEqual(t.body.columnDefinitions.map((c: { name: string; type: string }) => `${c.name}:${c.type}`), ['Name:string', 'Age:date']);
    assert.equal(t.body.rows[0].cells[0], 'p1');
  });

  it('filters by selectableFields and refuses other field labels', async () => {
    const W = '/apis/example.com/v1/namespaces/demo/widgets';
    await api.post(W).send({ metadata: { name: 'blue1' }, spec: { size: 1, color: 'blue' } }).expect(201);
    const r = await api.get(`${W}?fieldSelector=spec.color%3Dblue`).expect(200);
    assert.deepEqual(r.body.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['blue1']);
    const bad = await api.get(`${W}?fieldSelector=spec.size%3D1`).expect(400);
    assert.equal(bad.body.message, 'field label not supported: spec.size');
    const crd = widgetCrd({ plural: 'badsels', kind: 'BadSel', selectableFields: [{ jsonPath: '.spec.bars' }, { jsonPath: '.metadata.name' }, { jsonPath: '.spec.nope' }] });
    const res = await api.post(CRDS).send(crd).expect(422);
    assert.match(res.body.message, /selectableFields\[0\]\.jsonPath: Invalid value: "\.spec\.bars": must point to a field of type string, boolean or integer/);
    assert.match(res.body.message, /selectableFields\[2\]\.jsonPath: Invalid value: "\.spec\.nope": is an invalid path: does not refer to a valid field/);
  });
});
