import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { parseAllDocuments } from 'yaml';
import { adminIdentity } from '../support/credentials.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { WatchClient, type WatchEvent } from './support/watch-client.js';
import { eventually } from '../support/eventually.js';

// A change is encoded once per encoding and the same bytes go to every watcher of that encoding: as one
// pre-framed HTTP chunk on HTTP/1.1 connections, and as its unframed payload (shared too) on HTTP/2 streams.
// These tests hold watchers of both protocols, several encodings and opposite selectors on one change, so a
// shared buffer that leaked one watcher's framing, encoding or selection into another's would show.

const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

/** A watch over an HTTP/2 stream of a shared session: its body as received. */
class H2Watch {
  raw = '';
  status = 0;
  contentType = '';

  private constructor(private readonly stream: http2.ClientHttp2Stream) {}

  static open(session: http2.ClientHttp2Session, path: string, accept = 'application/json'): Promise<H2Watch> {
    const stream = session.request({ ':method': 'GET', ':path': path, accept });
    const w = new H2Watch(stream);
    stream.setEncoding('utf8');
    stream.on('data', (text: string) => (w.raw += text));
    stream.on('error', () => undefined);
    return new Promise((resolve, reject) => {
      stream.once('response', (headers) => {
        w.status = Number(headers[':status']);
        w.contentType = String(headers['content-type']);
        resolve(w);
      });
      stream.once('error', reject);
    });
  }

  /** JSON events so far (one per line). */
  events(): WatchEvent[] {
    return this.raw
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as WatchEvent);
  }

  /** YAML documents so far. */
  documents(): WatchEvent[] {
    return parseAllDocuments(this.raw).map((d) => d.toJS() as WatchEvent);
  }

  close(): void {
    this.stream.close();
  }
}

describe('watch: one change, watchers of both protocols, several encodings and selectors', { timeout: 120_000 }, () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;
  let session: http2.ClientHttp2Session;
  const h1: WatchClient[] = [];
  const h2: H2Watch[] = [];

  before(async () => {
    s = await startTestServer('watch_shared');
    api = request(s.url);
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'mix' } }).expect(201);
    const id = adminIdentity();
    session = http2.connect(s.url, { ca: id.caPem, cert: id.certPem, key: id.keyPem });
    session.on('error', () => undefined);
  });
  after(async () => {
    for (const w of h1) w.close();
    for (const w of h2) w.close();
    session?.close();
    await s?.close();
  });

  it('writes each watcher its own events, encoding and framing, and the same bytes to watchers of the same encoding', async () => {
    const rv = (await api.get('/api/v1/namespaces/mix/configmaps?limit=1').expect(200)).body.metadata.resourceVersion as string;
    const base = `/api/v1/namespaces/mix/configmaps?watch=1&resourceVersion=${rv}`;
    const sel = (s: string) => `${base}&labelSelector=${encodeURIComponent(s)}`;
    const h1Watch = async (path: string, headers: Record<string, string> = {}) => {
      const w = await WatchClient.watch(s.url, path, headers);
      h1.push(w);
      return w;
    };
    const h2Watch = async (path: string, accept?: string) => {
      const w = await H2Watch.open(session, path, accept);
      h2.push(w);
      return w;
    };
    const h1All = await h1Watch(base);
    const h1X = await h1Watch(sel('app=x'));
    const h1Table = await h1Watch(base, { Accept: TABLE });
    const h2All = await h2Watch(base);
    const h2AllAgain = await h2Watch(base);
    const h2X = await h2Watch(sel('app=x'));
    const h2NotX = await h2Watch(sel('app!=x'));
    const h2Yaml = await h2Watch(base, 'application/yaml');
    const h2Table = await h2Watch(base, TABLE);
    for (const w of h2) assert.equal(w.status, 200);
    assert.equal(h2Yaml.contentType, 'application/yaml;stream=watch');

    const created = (await api.post('/api/v1/namespaces/mix/configmaps').send({ metadata: { name: 'm1', labels: { app: 'x' } }, data: { v: '1' } }).expect(201)).body;
    const updated = (await api.put('/api/v1/namespaces/mix/configmaps/m1').send({ ...created, metadata: { ...created.metadata, labels: { app: 'y' } } }).expect(200)).body;
    await api.delete('/api/v1/namespaces/mix/configmaps/m1').expect(200);

    // Every watcher of everything: the three changes, as they are.
    assert.equal(await eventually(() => { const c = h2All.events().length; return c >= 3 ? c : false; }, { message: '3 events on h2All' }), 3);
    assert.equal(await eventually(() => { const c = h2AllAgain.events().length; return c >= 3 ? c : false; }, { message: '3 events on h2AllAgain' }), 3);
    const all = await h1All.take(3);
    for (const events of [all, h2All.events(), h2AllAgain.events()]) {
      assert.deepEqual(events.map((e) => e.type), ['ADDED', 'MODIFIED', 'DELETED']);
      assert.deepEqual(events[0].object, created);
      assert.deepEqual(events[1].object, updated);
      assert.equal(events[2].object.metadata.name, 'm1');
    }
    // The same bytes on both protocols: HTTP/2 carries the chunk's payload, unframed.
    assert.equal(h2All.raw, h1All.raw);
    assert.equal(h2AllAgain.raw, h1All.raw);
    assert.doesNotMatch(h2All.raw, /\r\n/, 'no HTTP/1.1 chunk framing on an HTTP/2 stream');

    // app=x: the object enters, then leaves at the update, shown in its old state at the update's revision.
    assert.equal(await eventually(() => { const c = h2X.events().length; return c >= 2 ? c : false; }, { message: '2 events on h2X' }), 2);
    const x = await h1X.take(2);
    for (const events of [x, h2X.events()]) {
      assert.deepEqual(events.map((e) => e.type), ['ADDED', 'DELETED']);
      assert.deepEqual(events[0].object, created);
      assert.deepEqual(events[1].object.metadata.labels, { app: 'x' });
      assert.equal(events[1].object.metadata.resourceVersion, updated.metadata.resourceVersion);
    }
    assert.equal(h2X.raw, h1X.raw);
    // app!=x: the opposite selection of the same changes.
    assert.equal(await eventually(() => { const c = h2NotX.events().length; return c >= 2 ? c : false; }, { message: '2 events on h2NotX' }), 2);
    const notX = h2NotX.events();
    assert.deepEqual(notX.map((e) => e.type), ['ADDED', 'DELETED']);
    assert.deepEqual(notX[0].object, updated);

    // YAML and Table: their own encodings of the same changes.
    assert.equal(await eventually(() => { const c = h2Yaml.documents().length; return c >= 3 ? c : false; }, { message: '3 events on h2Yaml' }), 3);
    const docs = h2Yaml.documents();
    assert.deepEqual(docs.map((d) => d.type), ['ADDED', 'MODIFIED', 'DELETED']);
    assert.deepEqual(docs[0].object, created);
    assert.deepEqual(docs[1].object, updated);
    assert.equal(await eventually(() => { const c = h2Table.events().length; return c >= 3 ? c : false; }, { message: '3 events on h2Table' }), 3);
    const tables = await h1Table.take(3);
    for (const events of [tables, h2Table.events()]) {
      assert.deepEqual(events.map((e) => e.type), ['ADDED', 'MODIFIED', 'DELETED']);
      for (const e of events) {
        assert.equal(e.object.kind, 'Table');
        assert.equal(e.object.rows[0].cells[0], 'm1');
      }
      // Columns on each watcher's first event only.
      assert.ok(events[0].object.columnDefinitions.length > 0);
      assert.deepEqual(events[1].object.columnDefinitions, []);
    }
    assert.equal(h2Table.raw, h1Table.raw);
  });
});
