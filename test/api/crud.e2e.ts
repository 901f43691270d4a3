import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { withoutRootCa } from '../support/root-ca.js';
import { eventually } from '../support/eventually.js';

describe('core verbs on namespaces, configmaps and secrets', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;

  before(async () => {
    s = await startTestServer('crud', { PLINTH_TENANTS: 'acme' });
    api = request(s.url);
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'demo' } }).expect(201);
  });
  after(async () => s.close());

  it('creates a namespace with phase Active and the kubernetes finalizer', async () => {
    const res = await api.post('/api/v1/namespaces').send({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns-one' } }).expect(201);
    assert.equal(res.body.kind, 'Namespace');
    assert.equal(res.body.status.phase, 'Active');
    assert.deepEqual(res.body.spec.finalizers, ['kubernetes']);
    assert.match(res.body.metadata.uid, /^[0-9a-f-]{36}$/);
    assert.match(res.body.metadata.resourceVersion, /^\d+$/);
    assert.match(res.body.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('creates a configmap (201), ignoring system fields the client sent', async () => {
    const res = await api
      .post('/api/v1/namespaces/demo/configmaps')
      .send({ metadata: { name: 'cm1', uid: 'client-uid', resourceVersion: '999', creationTimestamp: '2001-01-01T00:00:00Z', labels: { app: 'web' } }, data: { a: '1' } })
      .expect(201);
    assert.equal(res.body.apiVersion, 'v1');
    assert.equal(res.body.kind, 'ConfigMap');
    assert.notEqual(res.body.metadata.uid, 'client-uid');
    assert.notEqual(res.body.metadata.resourceVersion, '999');
    assert.notEqual(res.body.metadata.creationTimestamp, '2001-01-01T00:00:00Z');
    assert.equal(res.body.metadata.namespace, 'demo');
    const got = await api.get('/api/v1/namespaces/demo/configmaps/cm1').expect(200);
    assert.deepEqual(got.body, res.body);
  });

  it('answers 409 AlreadyExists for a duplicate create', async () => {
    const res = await api.post('/api/v1/namespaces/demo/configmaps').send({ metadata: { name: 'cm1' } }).expect(409);
    assert.equal(res.body.kind, 'Status');
    assert.equal(res.body.reason, 'AlreadyExists');
    assert.equal(res.body.message, 'configmaps "cm1" already exists');
    assert.deepEqual(res.body.details, { name: 'cm1', kind: 'configmaps' });
  });

  it('answers 404 NotFound with the upstream message for a missing object', async () => {
    const res = await api.get('/api/v1/namespaces/demo/configmaps/nope').expect(404);
    assert.equal(res.body.reason, 'NotFound');
    assert.equal(res.body.message, 'configmaps "nope" not found');
    assert.equal(res.body.code, 404);
  });

  it('refuses creation in a namespace that does not exist with 404', async () => {
    const res = await api.post('/api/v1/namespaces/ghost/configmaps').send({ metadata: { name: 'x' } }).expect(404);
    assert.equal(res.body.message, 'namespaces "ghost" not found');
  });

  it('generates a name from generateName', async () => {
    const res = await api.post('/api/v1/namespaces/demo/configmaps').send({ metadata: { generateName: 'gen-' } }).expect(201);
    assert.match(res.body.metadata.name, /^gen-[a-z0-9]{5}$/);
    assert.equal(res.body.metadata.generateName, 'gen-');
  });

  it('rejects invalid names with 422 and a cause naming metadata.name', async () => {
    const res = await api.post('/api/v1/namespaces/demo/configmaps').send({ metadata: { name: 'Bad_Name' } }).expect(422);
    assert.equal(res.body.reason, 'Invalid');
    assert.match(res.body.message, /^ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/);
    assert.equal(res.body.details.kind, 'ConfigMap');
    assert.equal(res.body.details.causes[0].field, 'metadata.name');
    assert.equal(res.body.details.causes[0].reason, 'FieldValueInvalid');
  });

  it('rejects a namespace name that is not a DNS-1123 label', async () => {
    const res = await api.post('/api/v1/namespaces').send({ metadata: { name: 'a.b' } }).expect(422);
    assert.equal(res.body.details.causes[0].field, 'metadata.name');
  });

  it('rejects a too-long label value with 422', async () => {
    const res = await api.post('/api/v1/namespaces/demo/configmaps').send({ metadata: { name: 'lbl', labels: { a: 'x'.repeat(64) } } }).expect(422);
    assert.equal(res.body.details.causes[0].field, 'metadata.labels');
  });

  it('answers malformed JSON with 400, never 500', async () => {
    const res = await api.post('/api/v1/namespaces/demo/configmaps').set('Content-Type', 'application/json').send('{"metadata": ').expect(400);
    assert.equal(res.body.kind, 'Status');
    assert.equal(res.body.reason, 'BadRequest');
  });

  it('answers wrong JSON types with 400 naming the field', async () => {
    const res = await api.post('/api/v1/namespaces/demo/configmaps').send({ metadata: { name: 'typ' }, data: 'not-a-map' }).expect(400);
    assert.match(res.body.message, /ConfigMap\.data/);
    const res2 = await api.post('/api/v1/namespaces/demo/configmaps').send(['array']).expect(400);
    assert.equal(res2.body.reason, 'BadRequest');
  });

  it('answers a body over 3 MiB with 413', async () => {
    const big = JSON.stringify({ metadata: { name: 'big' }, data: { a: 'x'.repeat(3 * 1024 * 1024 + 10) } });
    const res = await api.post('/api/v1/namespaces/demo/configmaps').set('Content-Type', 'application/json').send(big).expect(413);
    assert.equal(res.body.reason, 'RequestEntityTooLarge');
  });

  it('answers an unsupported body media type with 415', async () => {
    const res = await api.post('/api/v1/namespaces/demo/configmaps').set('Content-Type', 'text/plain').send('hello').expect(415);
    assert.equal(res.body.reason, 'UnsupportedMediaType');
  });

  it('answers an unknown resource with 404 and an unsupported method with 405', async () => {
    const res = await api.get('/api/v1/widgets').expect(404);
    assert.equal(res.body.reason, 'NotFound');
    const r405 = await api.post('/api/v1/namespaces/demo/configmaps/cm1').send({}).expect(405);
    assert.equal(r405.body.reason, 'MethodNotAllowed');
  });

  it('updates by PUT, and answers 409 Conflict for a stale resourceVersion', async () => {
    const cur = (await api.get('/api/v1/namespaces/demo/configmaps/cm1').expect(200)).body;
    const put = await api.put('/api/v1/namespaces/demo/configmaps/cm1').send({ ...cur, data: { a: '2' } }).expect(200);
    assert.ok(Number(put.body.metadata.resourceVersion) > Number(cur.metadata.resourceVersion));
    const stale = await api.put('/api/v1/namespaces/demo/configmaps/cm1').send({ ...cur, data: { a: '3' } }).expect(409);
    assert.equal(stale.body.reason, 'Conflict');
    assert.equal(
      stale.body.message,
      'Operation cannot be fulfilled on configmaps "cm1": the object has been modified; please apply your changes to the latest version and try again',
    );
    const now = (await api.get('/api/v1/namespaces/demo/configmaps/cm1').expect(200)).body;
    assert.deepEqual(now.data, { a: '2' });
  });

  it('treats a PUT without resourceVersion as an unconditional update', async () => {
    const res = await api.put('/api/v1/namespaces/demo/configmaps/cm1').send({ metadata: { name: 'cm1', labels: { app: 'web' } }, data: { a: 'u' } }).expect(200);
    assert.deepEqual(res.body.data, { a: 'u' });
  });

  it('keeps the resourceVersion when a PUT changes nothing', async () => {
    const cur = (await api.get('/api/v1/namespaces/demo/configmaps/cm1').expect(200)).body;
    const res = await api.put('/api/v1/namespaces/demo/configmaps/cm1').send(cur).expect(200);
    assert.equal(res.body.metadata.resourceVersion, cur.metadata.resourceVersion);
  });

  it('answers 422 when an update changes the uid or creationTimestamp', async () => {
    const cur = (await api.get('/api/v1/namespaces/demo/configmaps/cm1').expect(200)).body;
    const uid = await api.put('/api/v1/namespaces/demo/configmaps/cm1').send({ ...cur, metadata: { ...cur.metadata, uid: '00000000-0000-0000-0000-000000000000' } }).expect(422);
    assert.equal(uid.body.details.causes[0].field, 'metadata.uid');
    const ts = await api.put('/api/v1/namespaces/demo/configmaps/cm1').send({ ...cur, metadata: { ...cur.metadata, creationTimestamp: '2001-01-01T00:00:00Z' } }).expect(422);
    assert.equal(ts.body.details.causes[0].field, 'metadata.creationTimestamp');
  });

  it('answers 400 when the PUT body names another object', async () => {
    const res = await api.put('/api/v1/namespaces/demo/configmaps/cm1').send({ metadata: { name: 'other' } }).expect(400);
    assert.match(res.body.message, /does not match the name on the URL/);
  });

  it('patches with JSON patch including test, with merge patch and with strategic merge patch', async () => {
    await api.post('/api/v1/namespaces/demo/configmaps').send({ metadata: { name: 'pt' }, data: { a: '1', b: '2' } }).expect(201);
    const jp = await api
      .patch('/api/v1/namespaces/demo/configmaps/pt')
      .set('Content-Type', 'application/json-patch+json')
      .send(JSON.stringify([{ op: 'test', path: '/data/a', value: '1' }, { op: 'replace', path: '/data/a', value: '10' }]))
      .expect(200);
    assert.deepEqual(jp.body.data, { a: '10', b: '2' });
    const failedTest = await api
      .patch('/api/v1/namespaces/demo/configmaps/pt')
      .set('Content-Type', 'application/json-patch+json')
      .send(JSON.stringify([{ op: 'test', path: '/data/a', value: 'nope' }, { op: 'remove', path: '/data/a' }]));
    // Upstream answers a failed `test` op with 422 Invalid and leaves the object alone.
    assert.equal(failedTest.status, 422);
    assert.equal(failedTest.body.reason, 'Invalid');
    assert.deepEqual((await api.get('/api/v1/namespaces/demo/configmaps/pt').expect(200)).body.data, { a: '10', b: '2' });
    const mp = await api.patch('/api/v1/namespaces/demo/configmaps/pt').set('Content-Type', 'application/merge-patch+json').send(JSON.stringify({ data: { b: null, c: '3' } })).expect(200);
    assert.deepEqual(mp.body.data, { a: '10', c: '3' });
    const smp = await api
      .patch('/api/v1/namespaces/demo/configmaps/pt')
      .set('Content-Type', 'application/strategic-merge-patch+json')
      .send(JSON.stringify({ metadata: { labels: { tier: 'front' } }, data: { d: '4' } }))
      .expect(200);
    assert.deepEqual(smp.body.data, { a: '10', c: '3', d: '4' });
    assert.deepEqual(smp.body.metadata.labels, { tier: 'front' });
  });

  it('answers a patch carrying a stale resourceVersion with 409', async () => {
    const res = await api
      .patch('/api/v1/namespaces/demo/configmaps/pt')
      .set('Content-Type', 'application/merge-patch+json')
      .send(JSON.stringify({ metadata: { resourceVersion: '1' }, data: { e: '5' } }))
      .expect(409);
    assert.equal(res.body.reason, 'Conflict');
  });

  it('answers server-side apply without fieldManager with 422 (the media type is served)', async () => {
    const res = await api.patch('/api/v1/namespaces/demo/configmaps/pt').set('Content-Type', 'application/apply-patch+yaml').send('{}').expect(422);
    assert.equal(res.body.message, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
  });

  it('enforces immutable configmaps', async () => {
    await api.post('/api/v1/namespaces/demo/configmaps').send({ metadata: { name: 'imm' }, data: { a: '1' }, immutable: true }).expect(201);
    const res = await api.patch('/api/v1/namespaces/demo/configmaps/imm').set('Content-Type', 'application/merge-patch+json').send(JSON.stringify({ data: { a: '2' } })).expect(422);
    assert.match(res.body.message, /field is immutable when `immutable` is set/);
    await api.patch('/api/v1/namespaces/demo/configmaps/imm').set('Content-Type', 'application/merge-patch+json').send(JSON.stringify({ metadata: { labels: { ok: 'yes' } } })).expect(200);
  });

  it('merges secret stringData into base64 data, defaults type Opaque, and enforces immutability', async () => {
    const res = await api
      .post('/api/v1/namespaces/demo/secrets')
      .send({ metadata: { name: 's1' }, data: { a: Buffer.from('x').toString('base64') }, stringData: { b: 'hello', a: 'y' }, immutable: true })
      .expect(201);
    assert.equal(res.body.type, 'Opaque');
    assert.equal(res.body.stringData, undefined);
    assert.deepEqual(res.body.data, { a: Buffer.from('y').toString('base64'), b: Buffer.from('hello').toString('base64') });
    await api.patch('/api/v1/namespaces/demo/secrets/s1').set('Content-Type', 'application/merge-patch+json').send(JSON.stringify({ stringData: { c: 'z' } })).expect(422);
    const bad = await api.post('/api/v1/namespaces/demo/secrets').send({ metadata: { name: 's2' }, data: { a: '***' } }).expect(422);
    assert.equal(bad.body.details.causes[0].field, 'data[a]');
    await api.get('/api/v1/namespaces/demo/secrets/s2').expect(404);
  });

  it('deletes with uid and resourceVersion preconditions (409 on mismatch) and answers a Success Status', async () => {
    const c = (await api.post('/api/v1/namespaces/demo/configmaps').send({ metadata: { name: 'del' } }).expect(201)).body;
    const wrongUid = await api.delete('/api/v1/namespaces/demo/configmaps/del').send({ preconditions: { uid: 'nope' } }).expect(409);
    assert.match(wrongUid.body.message, /Precondition failed: UID in precondition: nope/);
    await api.delete('/api/v1/namespaces/demo/configmaps/del').send({ preconditions: { resourceVersion: '1' } }).expect(409);
    const ok = await api.delete('/api/v1/namespaces/demo/configmaps/del').send({ preconditions: { uid: c.metadata.uid, resourceVersion: c.metadata.resourceVersion } }).expect(200);
    assert.equal(ok.body.kind, 'Status');
    assert.equal(ok.body.status, 'Success');
    assert.equal(ok.body.details.uid, c.metadata.uid);
    await api.get('/api/v1/namespaces/demo/configmaps/del').expect(404);
  });

  it('keeps an object with finalizers (202, deletionTimestamp set) until its finalizers are removed', async () => {
    await api.post('/api/v1/namespaces/demo/configmaps').send({ metadata: { name: 'fin', finalizers: ['example.com/hold'] } }).expect(201);
    const del = await api.delete('/api/v1/namespaces/demo/configmaps/fin').expect(202);
    assert.ok(del.body.metadata.deletionTimestamp);
    const still = await api.get('/api/v1/namespaces/demo/configmaps/fin').expect(200);
    assert.ok(still.body.metadata.deletionTimestamp);
    const add = await api.patch('/api/v1/namespaces/demo/configmaps/fin').set('Content-Type', 'application/merge-patch+json').send(JSON.stringify({ metadata: { finalizers: ['example.com/hold', 'example.com/more'] } }));
    assert.equal(add.status, 422);
    await api.patch('/api/v1/namespaces/demo/configmaps/fin').set('Content-Type', 'application/merge-patch+json').send(JSON.stringify({ metadata: { finalizers: null } })).expect(200);
    await api.get('/api/v1/namespaces/demo/configmaps/fin').expect(404);
  });

  it('rejects dry-run values other than All with 400 and persists nothing with All', async () => {
    await api.post('/api/v1/namespaces/demo/configmaps?dryRun=Some').send({ metadata: { name: 'dry' } }).expect(400);
    const before = (await api.get('/api/v1/namespaces/demo/configmaps').expect(200)).body.metadata.resourceVersion;
    const res = await api.post('/api/v1/namespaces/demo/configmaps?dryRun=All').send({ metadata: { name: 'dry' } }).expect(201);
    assert.equal(res.body.metadata.name, 'dry');
    await api.get('/api/v1/namespaces/demo/configmaps/dry').expect(404);
    const after = (await api.get('/api/v1/namespaces/demo/configmaps').expect(200)).body.metadata.resourceVersion;
    assert.equal(after, before);
  });

  it('deletes a collection by label selector, leaving the rest', async () => {
    for (const [n, t] of [['dc1', 'x'], ['dc2', 'x'], ['dc3', 'y']]) {
      await api.post('/api/v1/namespaces/demo/configmaps').send({ metadata: { name: n, labels: { dc: t } } }).expect(201);
    }
    const res = await api.delete('/api/v1/namespaces/demo/configmaps?labelSelector=dc%3Dx').expect(200);
    assert.equal(res.body.kind, 'ConfigMapList');
    assert.deepEqual(res.body.items.map((i: { metadata: { name: string } }) => i.metadata.name).sort(), ['dc1', 'dc2']);
    await api.get('/api/v1/namespaces/demo/configmaps/dc1').expect(404);
    await api.get('/api/v1/namespaces/demo/configmaps/dc3').expect(200);
  });

  it('marks a namespace Terminating at once, deletes its contents in the background, then removes it; new content gets 403 meanwhile', async () => {
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'doomed' } }).expect(201);
    await api.post('/api/v1/namespaces/doomed/configmaps').send({ metadata: { name: 'c1' } }).expect(201);
    await api.post('/api/v1/namespaces/doomed/configmaps').send({ metadata: { name: 'held', finalizers: ['example.com/hold'] } }).expect(201);
    const del = await api.delete('/api/v1/namespaces/doomed');
    assert.equal(del.status, 202);
    assert.equal(del.body.status.phase, 'Terminating');
    await eventually(async () => (await api.get('/api/v1/namespaces/doomed/configmaps/c1')).status === 404, { timeoutMs: 15_000, message: 'contents deleted by the namespace controller' });
    const forbidden = await api.post('/api/v1/namespaces/doomed/configmaps').send({ metadata: { name: 'late' } }).expect(403);
    assert.equal(forbidden.body.message, 'configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated');
    await api.patch('/api/v1/namespaces/doomed/configmaps/held').set('Content-Type', 'application/merge-patch+json').send(JSON.stringify({ metadata: { finalizers: null } })).expect(200);
    await eventually(async () => (await api.get('/api/v1/namespaces/doomed')).status === 404, { timeoutMs: 15_000, message: 'the namespace removed once empty' });
  });

  it('refuses to delete the default namespace', async () => {
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'default' } });
    const res = await api.delete('/api/v1/namespaces/default').expect(403);
    assert.equal(res.body.message, 'namespaces "default" is forbidden: this namespace may not be deleted');
  });

  it('serves tenants under /clusters/{tenant} in isolation, and 404s an unknown tenant', async () => {
    await api.post('/clusters/acme/api/v1/namespaces').send({ metadata: { name: 'demo' } }).expect(201);
    await api.post('/clusters/acme/api/v1/namespaces/demo/configmaps').send({ metadata: { name: 'cm1' }, data: { t: 'acme' } }).expect(201);
    const theirs = await api.get('/clusters/acme/api/v1/namespaces/demo/configmaps/cm1').expect(200);
    const mine = await api.get('/api/v1/namespaces/demo/configmaps/cm1').expect(200);
    assert.deepEqual(theirs.body.data, { t: 'acme' });
    assert.notDeepEqual(mine.body.data, { t: 'acme' });
    const list = await api.get('/clusters/acme/api/v1/configmaps').expect(200);
    assert.deepEqual(withoutRootCa(list.body.items as { metadata: { name: string } }[]).map((i) => i.metadata.name), ['cm1']);
    await api.get('/clusters/nobody/api/v1/namespaces').expect(404);
  });

  it('serves healthz, livez, readyz and Prometheus metrics', async () => {
    await api.get('/healthz').expect(200, 'ok');
    await api.get('/livez').expect(200, 'ok');
    await api.get('/readyz').expect(200, 'ok');
    const m = await api.get('/metrics').expect(200);
    assert.match(m.text, /plinth_http_requests_total\{verb="create",group="",resource="configmaps",code="201"\} \d+/);
    assert.match(m.text, /plinth_http_request_duration_seconds_bucket\{le="0.005",verb="get"/);
  });
});
