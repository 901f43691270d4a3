import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { parseAllDocuments } from 'yaml';
import { NOT_ROOT_CA } from '../support/root-ca.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { WatchClient } from './support/watch-client.js';
import { eventually } from '../support/eventually.js';

/** Leaves out the kube-root-ca.crt every namespace holds (published with the namespace, so it is among a watch's initial events). */
const OURS = `fieldSelector=${encodeURIComponent(NOT_ROOT_CA)}`;
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

describe('watch: protocol and resourceVersion semantics', { timeout: 120_000 }, () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;
  const open: WatchClient[] = [];
  const watch = async (path: string, headers: Record<string, string> = {}) => {
    const w = await WatchClient.watch(s.url, path, headers);
    open.push(w);
    return w;
  };
  const create = async (ns: string, name: string, labels: Record<string, string> = {}) =>
    (await api.post(`/api/v1/namespaces/${ns}/configmaps`).send({ metadata: { name, labels }, data: { v: '1' } }).expect(201)).body;

  before(async () => {
    s = await startTestServer('watch_sem', { PLINTH_TENANTS: 'acme', PLINTH_BOOKMARK_INTERVAL_SECONDS: '1' });
    api = request(s.url);
    for (const ns of ['sem', 'tbl', 'yml', 'one', 'stream', 'bm', 'iso', 'mtr']) await api.post('/api/v1/namespaces').send({ metadata: { name: ns } }).expect(201);
    await request(s.url).post('/clusters/acme/api/v1/namespaces').send({ metadata: { name: 'iso' } }).expect(201);
  });
  after(async () => {
    for (const w of open) w.close();
    await s.close();
  });

  it('answers 200, chunked, application/json, one newline-terminated event per line', async () => {
    const w = await watch(`/api/v1/namespaces/sem/configmaps?${OURS}&resourceVersion=1`);
    assert.equal(w.status, 200);
    assert.equal(w.headers['transfer-encoding'], 'chunked');
    assert.equal(w.headers['content-type'], 'application/json');
    await create('sem', 'a');
    await create('sem', 'b');
    await w.take(2);
    assert.match(w.raw, /^\{"type":"ADDED","object":\{.*\}\}\n\{"type":"ADDED","object":\{.*\}\}\n$/);
  });

  it('without resourceVersion sends the current state as ADDED, then changes; "0" does the same; `watch=1` works', async () => {
    for (const rv of ['', '&resourceVersion=0']) {
      const w = await watch(`/api/v1/namespaces/sem/configmaps?${OURS}${rv}`);
      const initial = await w.take(2);
      assert.deepEqual(initial.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'a'], ['ADDED', 'b']]);
      assert.deepEqual(await w.drainFor(200), []);
    }
    const w1 = await WatchClient.open(s.url, '/api/v1/namespaces/sem/configmaps?watch=1');
    open.push(w1);
    assert.equal((await w1.next()).type, 'ADDED');
    const cm = await create('sem', 'c');
    let e;
    do e = await w1.next();
    while (e.object.metadata.name !== 'c');
    assert.deepEqual(e, { type: 'ADDED', object: cm });
  });

  it('watches one object by fieldSelector (kubectl get -w NAME) and by object path', async () => {
    const x = await create('one', 'x');
    await create('one', 'y');
    const w = await watch('/api/v1/namespaces/one/configmaps?fieldSelector=metadata.name%3Dx&resourceVersion=0');
    assert.deepEqual(await w.next(), { type: 'ADDED', object: x });
    const byPath = await watch(`/api/v1/namespaces/one/configmaps/x?resourceVersion=${x.metadata.resourceVersion}`);
    await api.put('/api/v1/namespaces/one/configmaps/y').send({ metadata: { name: 'y' }, data: { v: '2' } }).expect(200);
    const upd = await api.put('/api/v1/namespaces/one/configmaps/x').send({ ...x, data: { v: '2' } }).expect(200);
    assert.deepEqual(await w.next(), { type: 'MODIFIED', object: upd.body });
    assert.deepEqual(await byPath.next(), { type: 'MODIFIED', object: upd.body });
    assert.deepEqual(await w.drainFor(200), []);
  });

  it('streams a list: sendInitialEvents=true → ADDED for all, BOOKMARK with k8s.io/initial-events-end, then changes', async () => {
    await create('stream', 's1');
    await create('stream', 's2');
    const list = await api.get('/api/v1/namespaces/stream/configmaps').expect(200);
    const w = await watch(`/api/v1/namespaces/stream/configmaps?${OURS}&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=`);
    const [a, b, bm] = await w.take(3);
    assert.deepEqual([a.type, b.type], ['ADDED', 'ADDED']);
    assert.equal(bm.type, 'BOOKMARK');
    assert.deepEqual(bm.object, {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { resourceVersion: bm.object.metadata.resourceVersion, annotations: { 'k8s.io/initial-events-end': 'true' } },
    });
    assert.ok(Number(bm.object.metadata.resourceVersion) >= Number(list.body.metadata.resourceVersion));
    const s3 = await create('stream', 's3');
    assert.deepEqual(await w.nextChange(), { type: 'ADDED', object: s3 });
    // With resourceVersion=x the state is not older than x.
    const w2 = await watch(`/api/v1/namespaces/stream/configmaps?${OURS}&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${s3.metadata.resourceVersion}`);
    const evs = await w2.take(4);
    assert.deepEqual(evs.map((e) => e.type), ['ADDED', 'ADDED', 'ADDED', 'BOOKMARK']);
    // sendInitialEvents=false with NotOlderThan and no resourceVersion: only new changes.
    const w3 = await watch('/api/v1/namespaces/stream/configmaps?sendInitialEvents=false&resourceVersionMatch=NotOlderThan');
    const s4 = await create('stream', 's4');
    assert.deepEqual(await w3.next(), { type: 'ADDED', object: s4 });
  });

  it('rejects invalid watch option combinations with 422 and upstream messages', async () => {
    let res = await api.get('/api/v1/namespaces/sem/configmaps?watch=true&sendInitialEvents=true').expect(422);
    assert.equal(res.body.details.kind, 'ListOptions');
    assert.equal(res.body.details.group, 'meta.k8s.io');
    assert.match(res.body.message, /sendInitialEvents requires setting resourceVersionMatch to NotOlderThan/);
    res = await api.get('/api/v1/namespaces/sem/configmaps?watch=true&resourceVersion=5&resourceVersionMatch=NotOlderThan').expect(422);
    assert.match(res.body.message, /resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided/);
    res = await api.get('/api/v1/namespaces/sem/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=5').expect(422);
    assert.match(res.body.message, /Unsupported value: "Exact"/);
    res = await api.get('/api/v1/namespaces/sem/configmaps?sendInitialEvents=true').expect(422);
    assert.match(res.body.message, /sendInitialEvents is forbidden for list/);
    await api.get('/api/v1/namespaces/sem/configmaps?watch=true&resourceVersion=abc').expect(400);
    await api.get('/api/v1/namespaces/sem/configmaps?watch=true&labelSelector=a%20in').expect(400);
    await api.get('/api/v1/namespaces/sem/configmaps?watch=true&fieldSelector=spec.nope%3D1').expect(400);
    await api.get('/api/v1/namespaces/sem/configmaps?watch=true').set('Accept', 'text/csv').expect(406);
  });

  it('waits for a future resourceVersion, then answers 504 Too large resource version', async () => {
    const res = await api.get('/api/v1/namespaces/sem/configmaps?watch=true&resourceVersion=99999999').expect(504);
    assert.match(res.body.message, /Too large resource version/);
  });

  it('encodes Table watch events: columns on the first event only, rows carry the object name', async () => {
    await create('tbl', 't1');
    const w = await watch(`/api/v1/namespaces/tbl/configmaps?${OURS}`, { Accept: TABLE });
    assert.equal(w.headers['content-type'], 'application/json');
    const first = await w.next();
    assert.equal(first.type, 'ADDED');
    assert.equal(first.object.kind, 'Table');
    assert.equal(first.object.columnDefinitions[0].name, 'Name');
    assert.equal(first.object.rows[0].cells[0], 't1');
    assert.equal(first.object.rows[0].cells.length, first.object.columnDefinitions.length);
    assert.equal(first.object.rows[0].object.kind, 'PartialObjectMetadata');
    await create('tbl', 't2');
    const second = await w.next();
    assert.equal(second.object.kind, 'Table');
    assert.deepEqual(second.object.columnDefinitions, []);
    assert.equal(second.object.rows[0].cells[0], 't2');
    assert.match(second.object.metadata.resourceVersion, /^\d+$/);
  });

  it('encodes YAML watch events as a stream of YAML documents', async () => {
    const y1 = await create('yml', 'y1');
    const w = await WatchClient.open(s.url, `/api/v1/namespaces/yml/configmaps?watch=true&${OURS}`, { Accept: 'application/yaml' }, false);
    open.push(w);
    assert.equal(w.headers['content-type'], 'application/yaml;stream=watch');
    await create('yml', 'y2');
    const docs = await eventually(() => {
      const all: unknown[] = parseAllDocuments(w.raw).map((d) => d.toJS());
      return all.length >= 2 ? all : false;
    }, { timeoutMs: 5000, message: 'two YAML documents' });
    assert.deepEqual(docs[0], { type: 'ADDED', object: y1 });
    assert.equal((docs[1] as { object: { metadata: { name: string } } }).object.metadata.name, 'y2');
  });

  it('sends periodic BOOKMARKs with allowWatchBookmarks (interval configured to 1 s)', async () => {
    const cm = await create('bm', 'b1');
    const w = await watch(`/api/v1/namespaces/bm/configmaps?allowWatchBookmarks=true&resourceVersion=${cm.metadata.resourceVersion}`);
    const e = await w.next(4000);
    assert.equal(e.type, 'BOOKMARK');
    assert.deepEqual(Object.keys(e.object.metadata), ['resourceVersion']);
    assert.ok(Number(e.object.metadata.resourceVersion) >= Number(cm.metadata.resourceVersion));
    assert.equal(e.object.kind, 'ConfigMap');
    const plain = await watch(`/api/v1/namespaces/bm/configmaps?resourceVersion=${cm.metadata.resourceVersion}`);
    assert.deepEqual(await plain.drainFor(1600), [], 'no BOOKMARK unless asked for');
  });

  it('ends the stream cleanly after timeoutSeconds: a shorter timeout first', async () => {
    const ended: string[] = [];
    const short = await watch('/api/v1/namespaces/bm/configmaps?timeoutSeconds=1&resourceVersion=1');
    const long = await watch('/api/v1/namespaces/bm/configmaps?timeoutSeconds=3&resourceVersion=1');
    await Promise.all([short.ended.then(() => ended.push('1s')), long.ended.then(() => ended.push('3s'))]);
    assert.deepEqual(ended, ['1s', '3s']);
    assert.ok(short.endedCleanly && long.endedCleanly, 'ended with the chunked terminator');
  });

  it('keeps tenants apart: a watch in one tenant never sees another tenant’s changes', async () => {
    const other = await WatchClient.watch(s.url, `/clusters/acme/api/v1/namespaces/iso/configmaps?${OURS}&resourceVersion=1`);
    open.push(other);
    const all = await WatchClient.watch(s.url, `/clusters/acme/api/v1/configmaps?${OURS}&resourceVersion=1`);
    open.push(all);
    await create('iso', 'secret-plan');
    const mine = (await request(s.url).post('/clusters/acme/api/v1/namespaces/iso/configmaps').send({ metadata: { name: 'acme-cm' } }).expect(201)).body;
    assert.deepEqual(await other.next(), { type: 'ADDED', object: mine });
    assert.deepEqual(await all.next(), { type: 'ADDED', object: mine });
    assert.deepEqual(await other.drainFor(300), []);
    assert.deepEqual(await all.drainFor(0), []);
  });

  it('reports the watch pipeline in /readyz and watch metrics in /metrics', async () => {
    await api.get('/readyz').expect(200);
    const m = await api.get('/metrics').expect(200);
    assert.match(m.text, /plinth_watchers \d+/);
    assert.match(m.text, /plinth_watch_relay_leader 1/);
    assert.match(m.text, /plinth_watch_events_sent_total \d+/);
    assert.match(m.text, /plinth_watch_compaction_lag_seconds \d+/);
  });

  it('times the fan-out of each live change: into the cache → last watcher written, and NOTIFY → last watcher written', async () => {
    const count = async (name: string) => Number(new RegExp(`^${name}_count (\\d+)$`, 'm').exec((await api.get('/metrics').expect(200)).text)?.[1] ?? NaN);
    const dispatched = await count('plinth_watch_dispatch_seconds');
    const notified = await count('plinth_watch_notify_to_written_seconds');
    const w = await watch(`/api/v1/namespaces/mtr/configmaps?${OURS}`);
    for (const name of ['m1', 'm2', 'm3']) {
      await create('mtr', name);
      assert.equal((await w.next()).object.metadata.name, name);
    }
    // One observation per change handed to watchers; a change the relay read before its own NOTIFY arrived has no NOTIFY time.
    assert.ok((await count('plinth_watch_dispatch_seconds')) >= dispatched + 3);
    assert.ok((await count('plinth_watch_notify_to_written_seconds')) > notified);
  });
});

describe('watch: server-side maximum duration', { timeout: 120_000 }, () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer('watch_max', { PLINTH_MAX_WATCH_SECONDS: '4' });
  });
  after(async () => s.close());

  // The jitter itself (between half and all of the maximum) is watchDeadline's, checked in its spec.
  it('closes a watch without timeoutSeconds cleanly after the configured maximum with jitter: after one of timeoutSeconds below half of it', async () => {
    const ended: string[] = [];
    const short = await WatchClient.watch(s.url, '/api/v1/configmaps?timeoutSeconds=1&resourceVersion=1');
    const w = await WatchClient.watch(s.url, '/api/v1/configmaps?resourceVersion=1');
    await Promise.all([short.ended.then(() => ended.push('timeoutSeconds=1')), w.ended.then(() => ended.push('maximum'))]);
    assert.deepEqual(ended, ['timeoutSeconds=1', 'maximum']);
    assert.ok(w.endedCleanly, 'ended with the chunked terminator');
  });
});
