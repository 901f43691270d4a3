import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';

const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

describe('content negotiation, Table, YAML, field validation and dry run', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;

  before(async () => {
    s = await startTestServer('negotiation');
    api = request(s.url);
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'demo' } }).expect(201);
    for (const n of ['a', 'b', 'c']) await api.post('/api/v1/namespaces/demo/configmaps').send({ metadata: { name: n }, data: { x: '1', y: '2' } }).expect(201);
  });
  after(async () => s.close());

  it('serves a list as a Table with columns, cells and PartialObjectMetadata rows', async () => {
    const res = await api.get('/api/v1/namespaces/demo/configmaps?limit=2').set('Accept', TABLE).expect(200);
    assert.match(res.headers['content-type'], /^application\/json;as=Table;v=v1;g=meta.k8s.io/);
    assert.equal(res.body.kind, 'Table');
    assert.deepEqual(res.body.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'Data', 'Age']);
    assert.equal(res.body.columnDefinitions[0].format, 'name');
    assert.equal(res.body.rows.length, 2);
    assert.deepEqual(res.body.rows[0].cells.slice(0, 2), ['a', 2]);
    assert.equal(res.body.rows[0].object.kind, 'PartialObjectMetadata');
    assert.equal(res.body.rows[0].object.metadata.name, 'a');
    assert.ok(res.body.metadata.resourceVersion);
    assert.ok(res.body.metadata.continue);
  });

  it('honours includeObject=None and includeObject=Object', async () => {
    const none = await api.get('/api/v1/namespaces/demo/configmaps?includeObject=None').set('Accept', TABLE).expect(200);
    assert.equal(none.body.rows[0].object, undefined);
    const full = await api.get('/api/v1/namespaces/demo/configmaps/a?includeObject=Object').set('Accept', TABLE).expect(200);
    assert.equal(full.body.rows.length, 1);
    assert.deepEqual(full.body.rows[0].object.data, { x: '1', y: '2' });
  });

  it('uses per-kind columns for namespaces and secrets', async () => {
    const ns = await api.get('/api/v1/namespaces/demo').set('Accept', TABLE).expect(200);
    assert.deepEqual(ns.body.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'Status', 'Age']);
    assert.deepEqual(ns.body.rows[0].cells.slice(0, 2), ['demo', 'Active']);
    await api.post('/api/v1/namespaces/demo/secrets').send({ metadata: { name: 's' }, data: { k: 'dg==' } }).expect(201);
    const sec = await api.get('/api/v1/namespaces/demo/secrets').set('Accept', TABLE).expect(200);
    assert.deepEqual(sec.body.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'Type', 'Data', 'Age']);
    assert.deepEqual(sec.body.rows[0].cells.slice(0, 3), ['s', 'Opaque', 1]);
  });

  it('serves PartialObjectMetadataList', async () => {
    const res = await api
      .get('/api/v1/namespaces/demo/configmaps')
      .set('Accept', 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1')
      .expect(200);
    assert.equal(res.body.kind, 'PartialObjectMetadataList');
    assert.equal(res.body.items[0].kind, 'PartialObjectMetadata');
    assert.equal(res.body.items[0].data, undefined);
  });

  it('answers 406 when nothing in Accept can be served', async () => {
    const res = await api.get('/api/v1/namespaces/demo/configmaps').set('Accept', 'application/vnd.kubernetes.protobuf').expect(406);
    assert.equal(res.body.reason, 'NotAcceptable');
    assert.match(res.headers['content-type'], /application\/json/);
  });

  it('serves YAML responses and accepts YAML bodies', async () => {
    const res = await api.get('/api/v1/namespaces/demo/configmaps/a').set('Accept', 'application/yaml').expect(200);
    assert.match(res.headers['content-type'], /^application\/yaml/);
    assert.match(res.text, /^kind: ConfigMap$/m);
    const created = await api
      .post('/api/v1/namespaces/demo/configmaps')
      .set('Content-Type', 'application/yaml')
      .send('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  when: 2024-01-01\n')
      .expect(201);
    assert.equal(created.body.data.when, '2024-01-01');
  });

  it('rejects multi-document YAML with 400', async () => {
    const res = await api
      .post('/api/v1/namespaces/demo/configmaps')
      .set('Content-Type', 'application/yaml')
      .send('metadata:\n  name: one\n---\nmetadata:\n  name: two\n')
      .expect(400);
    assert.equal(res.body.reason, 'BadRequest');
  });

  it('gzips large responses when asked and pretty-prints on pretty=true', async () => {
    for (let i = 0; i < 40; i++) {
      await api.post('/api/v1/namespaces/demo/configmaps').send({ metadata: { name: `big-${i}` }, data: { v: 'x'.repeat(4000) } }).expect(201);
    }
    const res = await api.get('/api/v1/namespaces/demo/configmaps').set('Accept-Encoding', 'gzip').buffer(true).parse((r, cb) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => cb(null, Buffer.concat(chunks)));
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-encoding'], 'gzip');
    // superagent inflates gzip itself; the header proves the server compressed.
    const list = JSON.parse((res.body as Buffer).toString());
    assert.ok(list.items.length >= 40);
    const pretty = await api.get('/api/v1/namespaces/demo/configmaps/a?pretty=true').expect(200);
    assert.match(pretty.text, /^{\n {2}"kind": "ConfigMap",/);
  });

  it('warns about unknown and duplicate fields by default, one Warning header each', async () => {
    const res = await api
      .post('/api/v1/namespaces/demo/configmaps')
      .set('Content-Type', 'application/json')
      .send('{"metadata":{"name":"warned","labels":{"a":"1","a":"2"}},"spec":{"foo":1}}')
      .expect(201);
    const warnings = ([] as string[]).concat(res.headers.warning ?? []).join('\n');
    assert.match(warnings, /299 - "unknown field \\"spec\\""/);
    assert.match(warnings, /299 - "duplicate field \\"metadata.labels.a\\""/);
    assert.deepEqual(res.body.metadata.labels, { a: '2' });
    assert.equal(res.body.spec, undefined);
  });

  it('rejects unknown and duplicate fields with 400 under Strict, listing all', async () => {
    const res = await api
      .post('/api/v1/namespaces/demo/configmaps?fieldValidation=Strict')
      .set('Content-Type', 'application/json')
      .send('{"metadata":{"name":"strict","unknownMeta":1},"data":{"k":"1","k":"2"}}')
      .expect(400);
    assert.equal(
      res.body.message,
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "metadata.unknownMeta", duplicate field "data.k"',
    );
    await api.get('/api/v1/namespaces/demo/configmaps/strict').expect(404);
  });

  it('drops unknown fields silently under Ignore', async () => {
    const res = await api.post('/api/v1/namespaces/demo/configmaps?fieldValidation=Ignore').send({ metadata: { name: 'ignored' }, spec: { foo: 1 } }).expect(201);
    assert.equal(res.headers.warning, undefined);
    assert.equal(res.body.spec, undefined);
  });

  it('runs update, patch, delete and deletecollection under dryRun=All without persisting or consuming a revision', async () => {
    const before = (await api.get('/api/v1/namespaces/demo/configmaps').expect(200)).body;
    const rv = before.metadata.resourceVersion;
    const cur = (await api.get('/api/v1/namespaces/demo/configmaps/a').expect(200)).body;
    const put = await api.put('/api/v1/namespaces/demo/configmaps/a?dryRun=All').send({ ...cur, data: { x: 'dry' } }).expect(200);
    assert.equal(put.body.data.x, 'dry');
    await api.patch('/api/v1/namespaces/demo/configmaps/a?dryRun=All').set('Content-Type', 'application/merge-patch+json').send('{"data":{"x":"dry"}}').expect(200);
    await api.delete('/api/v1/namespaces/demo/configmaps/a?dryRun=All').expect(200);
    await api.delete('/api/v1/namespaces/demo/configmaps?dryRun=All').expect(200);
    const after = (await api.get('/api/v1/namespaces/demo/configmaps/a').expect(200)).body;
    assert.deepEqual(after, cur);
    // Nothing of the namespace changed: the same objects at the same revisions, and no event since (the shard's own
    // revision may move meanwhile: controllers write elsewhere on it).
    const versions = (l: { items: Array<{ metadata: { name: string; resourceVersion: string } }> }) => l.items.map((i) => `${i.metadata.name}@${i.metadata.resourceVersion}`);
    assert.deepEqual(versions((await api.get('/api/v1/namespaces/demo/configmaps').expect(200)).body), versions(before));
    const events = await api
      .get(`/api/v1/namespaces/demo/configmaps?watch=1&resourceVersion=${rv}&timeoutSeconds=1`)
      .buffer(true)
      .parse((res, done) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => done(null, text));
      })
      .expect(200);
    assert.equal(String(events.body).trim(), '', 'no watch event since the list before the dry runs');
    await api.delete('/api/v1/namespaces/demo/configmaps/a?dryRun=Yes').expect(400);
  });
});
