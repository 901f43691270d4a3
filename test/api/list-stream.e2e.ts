import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http2 from 'node:http2';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { adminIdentity } from '../support/credentials.js';
import { ROOT_CA_CONFIGMAP } from '../support/root-ca.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

type Item = { metadata: { name: string; resourceVersion: string } };

const COUNT = 100;
/** What a list of the namespace holds: the test's ConfigMaps, then the kube-root-ca.crt every namespace has. */
const LISTED = COUNT + 1;
const NAMES = [...Array.from({ length: COUNT }, (_, i) => `cm-${String(i).padStart(3, '0')}`), ROOT_CA_CONFIGMAP];
// About 8 MiB in all: well past the 1 MiB beyond which a list is streamed, and 8 chunks of about 1 MiB (16 rows, then 13 at a
// time). Random, so PostgreSQL cannot compress it: chunks are sized by the stored size.
const PAYLOAD = randomBytes(60 * 1024).toString('base64');
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

describe('unpaginated lists are read in chunks and streamed', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;

  const chunksRead = async () => Number(/^plinth_list_chunks_total (\d+)$/m.exec((await api.get('/metrics').expect(200)).text)?.[1]);

  before(async () => {
    s = await startTestServer('list_stream');
    api = request(s.url);
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'big' } }).expect(201);
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'small' } }).expect(201);
    for (let i = 0; i < COUNT; i++) {
      await api.post('/api/v1/namespaces/big/configmaps').send({ metadata: { name: `cm-${String(i).padStart(3, '0')}` }, data: { payload: PAYLOAD } }).expect(201);
    }
    await api.post('/api/v1/namespaces/small/configmaps').send({ metadata: { name: 'one' }, data: { v: '1' } }).expect(201);
  });
  after(async () => s.close());

  it('reads an 8 MiB list in several storage round trips and streams it, with the bytes of the whole-body answer', async () => {
    const before = await chunksRead();
    const res = await api.get('/api/v1/namespaces/big/configmaps').expect(200);
    const chunks = (await chunksRead()) - before;
    // Read whole (the old way) it would be one statement; at about 1 MiB a chunk it takes eight.
    assert.ok(chunks >= 6, `read in ${chunks} chunk(s)`);
    assert.equal(res.headers['transfer-encoding'], 'chunked');
    assert.equal(res.headers['content-length'], undefined);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.text, JSON.stringify(JSON.parse(res.text)) + '\n');
    const body = JSON.parse(res.text);
    assert.deepEqual(Object.keys(body), ['kind', 'apiVersion', 'metadata', 'items']);
    assert.deepEqual(body.metadata, { resourceVersion: body.metadata.resourceVersion });
    assert.deepEqual(body.items.map((i: Item) => i.metadata.name), NAMES);
    assert.ok(body.items.slice(0, COUNT).every((i: { data: { payload: string } }) => i.data.payload === PAYLOAD));
  });

  it('shows the same snapshot as the pages of a paginated list at its resourceVersion', async () => {
    const whole = JSON.parse((await api.get('/api/v1/namespaces/big/configmaps').expect(200)).text);
    const rv = whole.metadata.resourceVersion;
    // A write after the list: it must appear in neither answer.
    await api.post('/api/v1/namespaces/big/configmaps').send({ metadata: { name: 'cm-later' } }).expect(201);
    const paged: Item[] = [];
    let cont: string | undefined;
    do {
      const page = await api.get('/api/v1/namespaces/big/configmaps').query(cont ? { limit: 7, continue: cont } : { limit: 7, resourceVersion: rv }).expect(200);
      assert.equal(page.body.metadata.resourceVersion, rv);
      paged.push(...page.body.items);
      cont = page.body.metadata.continue;
    } while (cont);
    assert.deepEqual(paged, whole.items);
    const exact = await api.get('/api/v1/namespaces/big/configmaps').query({ resourceVersion: rv, resourceVersionMatch: 'Exact' }).expect(200);
    assert.deepEqual(JSON.parse(exact.text), whole);
    await api.delete('/api/v1/namespaces/big/configmaps/cm-later').expect(200);
  });

  it('streams pretty-printed JSON and gzip with the same bytes as the plain answer', async () => {
    const plain = (await api.get('/api/v1/namespaces/big/configmaps').expect(200)).text;
    const rv = JSON.parse(plain).metadata.resourceVersion;
    const at = { resourceVersion: rv, resourceVersionMatch: 'Exact' };
    const pretty = await api.get('/api/v1/namespaces/big/configmaps').query({ ...at, pretty: 'true' }).expect(200);
    assert.equal(pretty.text, JSON.stringify(JSON.parse(plain), null, 2) + '\n');
    const gz = await api.get('/api/v1/namespaces/big/configmaps').query(at).set('Accept-Encoding', 'gzip').expect(200);
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.equal(gz.headers['transfer-encoding'], 'chunked');
    // superagent inflates gzip itself: the inflated text is the plain answer.
    assert.equal(gz.text, plain);
  });

  it('streams a Table of the objects, in upstream key order', async () => {
    const before = await chunksRead();
    const res = await api.get('/api/v1/namespaces/big/configmaps').query({ includeObject: 'Object' }).set('Accept', TABLE).expect(200);
    assert.ok((await chunksRead()) - before >= 6);
    assert.equal(res.headers['transfer-encoding'], 'chunked');
    const table = JSON.parse(res.text);
    assert.equal(res.text, JSON.stringify(table) + '\n');
    assert.deepEqual(Object.keys(table), ['kind', 'apiVersion', 'metadata', 'columnDefinitions', 'rows']);
    assert.equal(table.kind, 'Table');
    assert.ok(table.columnDefinitions.length > 0);
    assert.deepEqual(table.rows.map((r: { object: Item }) => r.object.metadata.name), NAMES);
  });

  it('reads no further than a client that stops reading (HTTP/2 flow control), and finishes when it reads again', async () => {
    const id = adminIdentity();
    const session = http2.connect(s.url, { ca: id.caPem, cert: id.certPem, key: id.keyPem });
    try {
      const before = await chunksRead();
      const stream = session.request({ ':path': '/api/v1/namespaces/big/configmaps', accept: 'application/json' });
      stream.end();
      // No 'data' listener yet: the stream stays paused, so the client's window closes after 64 KiB.
      const status = await new Promise<number>((resolve, reject) => stream.once('response', (h) => resolve(Number(h[':status']))).once('error', reject));
      assert.equal(status, 200);
      await new Promise((r) => setTimeout(r, 1000));
      const whileStalled = (await chunksRead()) - before;
      assert.ok(whileStalled <= 3, `read ${whileStalled} chunks for a client that read nothing`);
      let text = '';
      stream.setEncoding('utf8');
      stream.on('data', (d: string) => (text += d));
      await new Promise((resolve, reject) => stream.once('end', resolve).once('error', reject));
      assert.ok((await chunksRead()) - before >= 6);
      assert.equal(JSON.parse(text).items.length, LISTED);
    } finally {
      session.close();
    }
  });

  it('stops reading when the client goes away mid-list, and serves the next list', async () => {
    const id = adminIdentity();
    const session = http2.connect(s.url, { ca: id.caPem, cert: id.certPem, key: id.keyPem });
    const before = await chunksRead();
    const stream = session.request({ ':path': '/api/v1/namespaces/big/configmaps', accept: 'application/json' });
    stream.end();
    await new Promise((resolve, reject) => stream.once('data', resolve).once('error', reject));
    stream.close(http2.constants.NGHTTP2_CANCEL);
    session.close();
    await new Promise((r) => setTimeout(r, 500));
    const afterCancel = (await chunksRead()) - before;
    assert.ok(afterCancel < 8, `read ${afterCancel} chunks for a client that went away`);
    const res = await api.get('/api/v1/namespaces/big/configmaps').expect(200);
    assert.equal(JSON.parse(res.text).items.length, LISTED);
  });

  it('still sends a small list whole, with a Content-Length, in one storage read', async () => {
    const before = await chunksRead();
    const res = await api.get('/api/v1/namespaces/small/configmaps').expect(200);
    assert.equal((await chunksRead()) - before, 1);
    assert.equal(res.headers['content-length'], String(Buffer.byteLength(res.text)));
    assert.deepEqual(res.body.items.map((i: Item) => i.metadata.name), [ROOT_CA_CONFIGMAP, 'one']);
  });

  it('answers a failure before the first byte with a Status', async () => {
    const res = await api.get('/api/v1/namespaces/big/configmaps').query({ resourceVersion: '999999999', resourceVersionMatch: 'Exact' }).expect(504);
    assert.equal(res.body.kind, 'Status');
  });
});
