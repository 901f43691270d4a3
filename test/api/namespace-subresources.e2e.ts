import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe('namespace status and finalize subresources, owner references', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;

  before(async () => {
    s = await startTestServer('ns-sub');
    api = request(s.url);
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'sub' } }).expect(201);
  });
  after(async () => s.close());

  it('GET namespaces/{n}/status has phase Active', async () => {
    const res = await api.get('/api/v1/namespaces/sub/status').expect(200);
    assert.equal(res.body.kind, 'Namespace');
    assert.equal(res.body.status.phase, 'Active');
  });

  it('a merge PATCH of /status applies annotations and conditions, but not spec', async () => {
    const res = await api
      .patch('/api/v1/namespaces/sub/status')
      .set('Content-Type', 'application/merge-patch+json')
      .send(JSON.stringify({ metadata: { annotations: { 'e2e.example.com/a': 'b' } }, spec: { finalizers: [] }, status: { conditions: [{ type: 'StatusUpdate', status: 'True', reason: 'E2E', message: 'set' }] } }))
      .expect(200);
    assert.equal(res.body.metadata.annotations['e2e.example.com/a'], 'b');
    assert.equal(res.body.status.conditions[0].type, 'StatusUpdate');
    assert.deepEqual(res.body.spec.finalizers, ['kubernetes']);
  });

  it('a PATCH of the main resource cannot change status', async () => {
    const res = await api
      .patch('/api/v1/namespaces/sub')
      .set('Content-Type', 'application/merge-patch+json')
      .send(JSON.stringify({ status: { phase: 'Terminating' }, metadata: { labels: { l: 'v' } } }))
      .expect(200);
    assert.equal(res.body.status.phase, 'Active');
    assert.equal(res.body.metadata.labels.l, 'v');
  });

  it('PUT namespaces/{n}/finalize changes spec.finalizers only', async () => {
    const cur = (await api.get('/api/v1/namespaces/sub').expect(200)).body;
    const res = await api
      .put('/api/v1/namespaces/sub/finalize')
      .send({ ...cur, metadata: { ...cur.metadata, labels: { ignored: 'yes' } }, spec: { finalizers: ['kubernetes', 'e2e.example.com/fakeFinalizer'] } })
      .expect(200);
    assert.deepEqual(res.body.spec.finalizers, ['kubernetes', 'e2e.example.com/fakeFinalizer']);
    const back = (await api.get('/api/v1/namespaces/sub').expect(200)).body;
    assert.deepEqual(back.spec.finalizers, ['kubernetes', 'e2e.example.com/fakeFinalizer']);
  });

  it('stores valid ownerReferences and rejects incomplete ones with 422', async () => {
    const owner = (await api.post('/api/v1/namespaces/sub/configmaps').send({ metadata: { name: 'owner' } }).expect(201)).body;
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid, controller: true };
    const child = await api.post('/api/v1/namespaces/sub/configmaps').send({ metadata: { name: 'child', ownerReferences: [ref] } }).expect(201);
    assert.deepEqual(child.body.metadata.ownerReferences, [ref]);
    const bad = await api.post('/api/v1/namespaces/sub/configmaps').send({ metadata: { name: 'bad', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner' }] } }).expect(422);
    assert.ok(bad.body.details.causes.some((c: { field: string }) => c.field.startsWith('metadata.ownerReferences')));
    const twoControllers = await api
      .post('/api/v1/namespaces/sub/configmaps')
      .send({ metadata: { name: 'two', ownerReferences: [ref, { ...ref, name: 'other', uid: '11111111-1111-1111-1111-111111111111' }] } })
      .expect(422);
    assert.match(twoControllers.body.message, /Only one reference can have Controller set to true/);
  });

  it('treats null list elements as Go does (zero values), answering 422, never 500', async () => {
    const refs = await api.post('/api/v1/namespaces/sub/configmaps').send({ metadata: { name: 'nulls', ownerReferences: [null] } }).expect(422);
    assert.ok(refs.body.details.causes.some((c: { field: string }) => c.field === 'metadata.ownerReferences[0].apiVersion'));
    const fins = await api.post('/api/v1/namespaces/sub/configmaps').send({ metadata: { name: 'nulls', finalizers: [null] } }).expect(422);
    assert.equal(fins.body.reason, 'Invalid');
  });

  it('rejects an invalid finalizer name with 422', async () => {
    const res = await api.post('/api/v1/namespaces/sub/configmaps').send({ metadata: { name: 'f', finalizers: ['not a finalizer'] } }).expect(422);
    assert.equal(res.body.details.causes[0].field, 'metadata.finalizers');
  });
});
