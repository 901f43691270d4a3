import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';

const APPLY = 'application/apply-patch+yaml';
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

describe('server-side apply and managedFields', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;
  const cmPath = (name: string) => `/api/v1/namespaces/ssa/configmaps/${name}`;
  const applyCm = (name: string, body: unknown, query: string) =>
    api.patch(`${cmPath(name)}?${query}`).set('Content-Type', APPLY).send(typeof body === 'string' ? body : JSON.stringify(body));
  const cm = (name: string, data: Record<string, string>, extra: Record<string, unknown> = {}) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, ...extra },
    data,
  });

  before(async () => {
    s = await startTestServer('ssa');
    api = request(s.url);
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'ssa' } }).expect(201);
  });
  after(async () => s.close());

  it('creates a missing object (201) owned by the applier, in upstream managedFields format', async () => {
    const res = await applyCm('created', cm('created', { a: '1' }, { labels: { app: 'web' } }), 'fieldManager=alice').expect(201);
    assert.equal(res.body.data.a, '1');
    const [entry, ...rest] = res.body.metadata.managedFields;
    assert.equal(rest.length, 0);
    assert.match(entry.time, TIME);
    assert.deepEqual(
      { ...entry, time: undefined },
      { manager: 'alice', operation: 'Apply', apiVersion: 'v1', time: undefined, fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} }, 'f:metadata': { 'f:labels': { 'f:app': {} } } } },
    );
    const got = await api.get(cmPath('created')).expect(200);
    assert.deepEqual(got.body.metadata.managedFields, res.body.metadata.managedFields);
  });

  it('accepts YAML bodies and answers 200 when the object exists', async () => {
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: created\ndata:\n  a: "1"\n  b: "2"\n';
    const res = await applyCm('created', yaml, 'fieldManager=alice').expect(200);
    assert.deepEqual(res.body.data, { a: '1', b: '2' });
  });

  it('records creates and updates as Update entries, named by fieldManager or the User-Agent', async () => {
    const created = await api.post('/api/v1/namespaces/ssa/configmaps?fieldManager=creator').send(cm('upd', { a: '1' })).expect(201);
    assert.deepEqual(created.body.metadata.managedFields.map((e: { manager: string; operation: string; fieldsV1: unknown }) => [e.manager, e.operation, e.fieldsV1]), [
      ['creator', 'Update', { 'f:data': { '.': {}, 'f:a': {} } }],
    ]);
    const patched = await api
      .patch(cmPath('upd'))
      .set('Content-Type', 'application/merge-patch+json')
      .set('User-Agent', 'my-tool/1.2 (linux)')
      .send(JSON.stringify({ data: { a: '2', b: '3' } }))
      .expect(200);
    const byManager = Object.fromEntries(patched.body.metadata.managedFields.map((e: { manager: string; fieldsV1: unknown }) => [e.manager, e.fieldsV1]));
    // The creator keeps the map it added (a member without children is {}); the patcher owns the keys it changed.
    assert.deepEqual(byManager, { creator: { 'f:data': {} }, 'my-tool': { 'f:data': { 'f:a': {}, 'f:b': {} } } });
  });

  it('answers a conflicting apply with 409 naming the field and its owner, and force takes it over', async () => {
    await applyCm('conflict', cm('conflict', { k: '1' }), 'fieldManager=alice').expect(201);
    const res = await applyCm('conflict', cm('conflict', { k: '2' }), 'fieldManager=bob').expect(409);
    assert.deepEqual(res.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Apply failed with 1 conflict: conflict with "alice": .data.k',
      reason: 'Conflict',
      details: { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.data.k' }] },
      code: 409,
    });
    const forced = await applyCm('conflict', cm('conflict', { k: '2' }), 'fieldManager=bob&force=true').expect(200);
    assert.equal(forced.body.data.k, '2');
    assert.deepEqual(forced.body.metadata.managedFields.map((e: { manager: string }) => e.manager), ['bob']);
  });

  it('names Update owners with their apiVersion in conflicts', async () => {
    await api.post('/api/v1/namespaces/ssa/configmaps?fieldManager=kubectl-edit').send(cm('upd-owner', { k: '1' })).expect(201);
    const res = await applyCm('upd-owner', cm('upd-owner', { k: '2' }), 'fieldManager=me').expect(409);
    assert.equal(res.body.message, 'Apply failed with 1 conflict: conflict with "kubectl-edit" using v1: .data.k');
  });

  it('removes fields the applier stops applying unless another manager owns them', async () => {
    await applyCm('prune', cm('prune', { mine: '1', shared: '1' }), 'fieldManager=alice').expect(201);
    await applyCm('prune', cm('prune', { shared: '1' }), 'fieldManager=bob').expect(200);
    const res = await applyCm('prune', cm('prune', {}), 'fieldManager=alice').expect(200);
    assert.deepEqual(res.body.data, { shared: '1' });
  });

  it('an identical apply changes nothing, not even the resourceVersion', async () => {
    const first = await applyCm('noop', cm('noop', { a: '1' }), 'fieldManager=alice').expect(201);
    const again = await applyCm('noop', cm('noop', { a: '1' }), 'fieldManager=alice').expect(200);
    assert.equal(again.body.metadata.resourceVersion, first.body.metadata.resourceVersion);
    assert.deepEqual(again.body.metadata.managedFields, first.body.metadata.managedFields);
  });

  it('dryRun=All answers the applied object without storing it', async () => {
    const res = await applyCm('dry', cm('dry', { a: '1' }), 'fieldManager=alice&dryRun=All').expect(201);
    assert.equal(res.body.data.a, '1');
    await api.get(cmPath('dry')).expect(404);
  });

  it('rejects bad applies as upstream: no fieldManager, wrong kind, managedFields, name, undeclared fields, force on other patches', async () => {
    const noManager = await applyCm('bad', cm('bad', {}), '').expect(422);
    assert.equal(noManager.body.message, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
    const kind = await applyCm('bad', { ...cm('bad', {}), kind: 'Secret' }, 'fieldManager=m').expect(400);
    assert.equal(kind.body.message, 'invalid object type: /v1, Kind=Secret');
    const mf = await applyCm('bad', cm('bad', {}, { managedFields: [] }), 'fieldManager=m').expect(400);
    assert.equal(mf.body.message, 'metadata.managedFields must be nil');
    const name = await applyCm('bad', cm('other', {}), 'fieldManager=m').expect(400);
    assert.equal(name.body.message, 'the name of the object (other) does not match the name on the URL (bad)');
    const unknown = await applyCm('bad', { ...cm('bad', {}), bogus: 1 }, 'fieldManager=m').expect(400);
    assert.equal(unknown.body.message, 'failed to create typed patch object (/bad; /v1, Kind=ConfigMap): .bogus: field not declared in schema');
    const syntax = await applyCm('bad', '{"apiVersion": ', 'fieldManager=m').expect(400);
    assert.match(syntax.body.message, /^error decoding YAML: /);
    const force = await api.patch(`${cmPath('created')}?force=true`).set('Content-Type', 'application/merge-patch+json').send('{}').expect(422);
    assert.equal(force.body.message, 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch');
  });

  it('managedFields sent on an update replace the stored ones, and [{}] resets them', async () => {
    await applyCm('reset', cm('reset', { a: '1' }), 'fieldManager=alice').expect(201);
    const reset = await api.patch(cmPath('reset')).set('Content-Type', 'application/merge-patch+json').send(JSON.stringify({ metadata: { managedFields: [{}] } })).expect(200);
    assert.equal(reset.body.metadata.managedFields, undefined);
    const entry = { manager: 'hand-made', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } } };
    const set = await api.patch(cmPath('reset')).set('Content-Type', 'application/json-patch+json').send(JSON.stringify([{ op: 'add', path: '/metadata/managedFields', value: [entry] }])).expect(200);
    assert.deepEqual(set.body.metadata.managedFields, [entry]);
    const bad = await api
      .patch(cmPath('reset'))
      .set('Content-Type', 'application/json-patch+json')
      .send(JSON.stringify([{ op: 'replace', path: '/metadata/managedFields', value: [{ ...entry, operation: 'Bogus' }] }]))
      .expect(200);
    assert.deepEqual(bad.body.metadata.managedFields, [entry]);
  });

  it('a write to /status is recorded with its subresource', async () => {
    await api.post('/api/v1/namespaces?fieldManager=maker').send({ metadata: { name: 'ssa-status' } }).expect(201);
    const got = await api.get('/api/v1/namespaces/ssa-status').expect(200);
    const res = await api
      .put('/api/v1/namespaces/ssa-status/status?fieldManager=controller')
      .send({ ...got.body, status: { ...got.body.status, conditions: [{ type: 'NamespaceDeletionDiscoveryFailure', status: 'False', reason: 'R', message: 'm', lastTransitionTime: '2026-01-01T00:00:00Z' }] } })
      .expect(200);
    const entry = res.body.metadata.managedFields.find((e: { manager: string }) => e.manager === 'controller');
    assert.equal(entry.subresource, 'status');
    assert.deepEqual(Object.keys(entry.fieldsV1), ['f:status']);
  });
});
