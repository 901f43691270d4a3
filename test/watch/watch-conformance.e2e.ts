import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { WatchClient } from './support/watch-client.js';
import { ChangeLogRepository } from '@plinth/storage';

// The five watch tests of test/e2e/apimachinery/watch.go (checklist items 1–5), over HTTP.
describe('watch: conformance (watch.go)', { timeout: 120_000 }, () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;
  const open: WatchClient[] = [];
  const watch = async (path: string) => {
    const w = await WatchClient.watch(s.url, path);
    open.push(w);
    assert.equal(w.status, 200);
    return w;
  };

  before(async () => {
    s = await startTestServer('watch_conf');
    api = request(s.url);
    for (const ns of ['w1', 'w2', 'w3', 'w4', 'w5']) await api.post('/api/v1/namespaces').send({ metadata: { name: ns } }).expect(201);
  });
  after(async () => {
    for (const w of open) w.close();
    await s.close();
  });

  it('1: observes add, update and delete notifications, each watcher only for its selector', async () => {
    const base = '/api/v1/namespaces/w1/configmaps?labelSelector=';
    const wa = await watch(base + encodeURIComponent('watch-this-configmap in (multiple-watchers-A)'));
    const wb = await watch(base + encodeURIComponent('watch-this-configmap in (multiple-watchers-B)'));
    const wab = await watch(base + encodeURIComponent('watch-this-configmap in (multiple-watchers-A,multiple-watchers-B)'));
    const cm = (name: string, label: string, data: Record<string, string> = {}) => ({
      metadata: { name, labels: { 'watch-this-configmap': label } },
      data,
    });
    const a = await api.post('/api/v1/namespaces/w1/configmaps').send(cm('e2e-watch-test-configmap-a', 'multiple-watchers-A')).expect(201);
    let e = await wa.next();
    assert.equal(e.type, 'ADDED');
    assert.deepEqual(e.object, a.body);
    assert.equal((await wab.next()).type, 'ADDED');
    const a2 = await api
      .put('/api/v1/namespaces/w1/configmaps/e2e-watch-test-configmap-a')
      .send({ ...a.body, data: { mutation: '1' } })
      .expect(200);
    e = await wa.next();
    assert.equal(e.type, 'MODIFIED');
    assert.deepEqual(e.object, a2.body);
    assert.equal((await wab.next()).type, 'MODIFIED');
    await api.delete('/api/v1/namespaces/w1/configmaps/e2e-watch-test-configmap-a').expect(200);
    e = await wa.next();
    assert.equal(e.type, 'DELETED');
    assert.equal(e.object.metadata.name, 'e2e-watch-test-configmap-a');
    assert.equal((await wab.next()).type, 'DELETED');

    await api.post('/api/v1/namespaces/w1/configmaps').send(cm('e2e-watch-test-configmap-b', 'multiple-watchers-B')).expect(201);
    assert.equal((await wb.next()).type, 'ADDED');
    assert.equal((await wab.next()).type, 'ADDED');
    await api.delete('/api/v1/namespaces/w1/configmaps/e2e-watch-test-configmap-b').expect(200);
    assert.equal((await wb.next()).type, 'DELETED');
    assert.equal((await wab.next()).type, 'DELETED');
    // Watcher A saw nothing of B; B nothing of A.
    assert.deepEqual(await wa.drainFor(500), []);
    assert.deepEqual(
      wb.events.map((x) => x.object.metadata.name),
      ['e2e-watch-test-configmap-b', 'e2e-watch-test-configmap-b'],
    );
  });

  it('2: starts watching from a specific resource version', async () => {
    const c = await api.post('/api/v1/namespaces/w2/configmaps').send({ metadata: { name: 'rv-cm' } }).expect(201);
    const u1 = await api.put('/api/v1/namespaces/w2/configmaps/rv-cm').send({ ...c.body, data: { mutation: '1' } }).expect(200);
    const u2 = await api.put('/api/v1/namespaces/w2/configmaps/rv-cm').send({ ...u1.body, data: { mutation: '2' } }).expect(200);
    await api.delete('/api/v1/namespaces/w2/configmaps/rv-cm').expect(200);
    const w = await watch(`/api/v1/namespaces/w2/configmaps?resourceVersion=${u1.body.metadata.resourceVersion}`);
    const [m, d] = await w.take(2);
    assert.equal(m.type, 'MODIFIED');
    assert.deepEqual(m.object, u2.body);
    assert.equal(d.type, 'DELETED');
    assert.deepEqual(await w.drainFor(300), []);
  });

  it('3: restarts watching from the last resource version observed by the previous watch', async () => {
    const c = await api.post('/api/v1/namespaces/w3/configmaps').send({ metadata: { name: 'restart-cm' } }).expect(201);
    const first = await watch(`/api/v1/namespaces/w3/configmaps?resourceVersion=${c.body.metadata.resourceVersion}`);
    const u1 = await api.put('/api/v1/namespaces/w3/configmaps/restart-cm').send({ ...c.body, data: { mutation: '1' } }).expect(200);
    const seen = await first.next();
    assert.equal(seen.type, 'MODIFIED');
    first.close();
    const u2 = await api.put('/api/v1/namespaces/w3/configmaps/restart-cm').send({ ...u1.body, data: { mutation: '2' } }).expect(200);
    await api.delete('/api/v1/namespaces/w3/configmaps/restart-cm').expect(200);
    const second = await watch(`/api/v1/namespaces/w3/configmaps?resourceVersion=${seen.object.metadata.resourceVersion}`);
    const [m, d] = await second.take(2);
    assert.equal(m.type, 'MODIFIED');
    assert.deepEqual(m.object, u2.body);
    assert.equal(d.type, 'DELETED');
    assert.deepEqual(await second.drainFor(300), []);
  });

  it('4: sends DELETED when an object stops matching the selector and ADDED when it matches again', async () => {
    const sel = encodeURIComponent('watch-this-configmap=label-changed-and-restored');
    const w = await watch(`/api/v1/namespaces/w4/configmaps?labelSelector=${sel}`);
    const path = '/api/v1/namespaces/w4/configmaps/label-cm';
    let cur = (
      await api
        .post('/api/v1/namespaces/w4/configmaps')
        .send({ metadata: { name: 'label-cm', labels: { 'watch-this-configmap': 'label-changed-and-restored' } } })
        .expect(201)
    ).body;
    assert.equal((await w.next()).type, 'ADDED');
    cur = (await api.put(path).send({ ...cur, data: { mutation: '1' } }).expect(200)).body;
    assert.equal((await w.next()).type, 'MODIFIED');
    const beforeLeaving = cur;
    cur = (await api.put(path).send({ ...cur, metadata: { ...cur.metadata, labels: { 'watch-this-configmap': 'wrong-value' } } }).expect(200)).body;
    const del = await w.next();
    assert.equal(del.type, 'DELETED');
    // The old state, at the revision of the change that took it out of the selection.
    assert.deepEqual(del.object.data, beforeLeaving.data);
    assert.equal(del.object.metadata.labels['watch-this-configmap'], 'label-changed-and-restored');
    assert.equal(del.object.metadata.resourceVersion, cur.metadata.resourceVersion);
    cur = (await api.put(path).send({ ...cur, data: { mutation: '2' } }).expect(200)).body;
    assert.deepEqual(await w.drainFor(500), [], 'no events while the object does not match');
    cur = (
      await api.put(path).send({ ...cur, metadata: { ...cur.metadata, labels: { 'watch-this-configmap': 'label-changed-and-restored' } } }).expect(200)
    ).body;
    const added = await w.next();
    assert.equal(added.type, 'ADDED');
    assert.deepEqual(added.object, cur);
    cur = (await api.put(path).send({ ...cur, data: { mutation: '3' } }).expect(200)).body;
    assert.equal((await w.next()).type, 'MODIFIED');
    await api.delete(path).expect(200);
    assert.equal((await w.next()).type, 'DELETED');
  });

  it('5: concurrent watches started at successive resource versions deliver identical sequences', async () => {
    const rvs: number[] = [];
    const names = Array.from({ length: 10 }, (_, i) => `seq-${i}`);
    const write = async (i: number) => {
      const name = names[i % names.length];
      const path = `/api/v1/namespaces/w5/configmaps/${name}`;
      const got = await api.get(path);
      let res;
      if (got.status === 404) res = await api.post('/api/v1/namespaces/w5/configmaps').send({ metadata: { name }, data: { i: String(i) } });
      else if (i % 7 === 0) res = await api.delete(path);
      else res = await api.put(path).send({ ...got.body, data: { i: String(i) } });
      assert.ok(res.status < 300, `write ${i}: ${res.status}`);
      // DELETE answers with the object at its last revision; the change itself has the next one.
      if (res.request.method !== 'DELETE') rvs.push(Number(res.body.metadata.resourceVersion));
    };
    for (let i = 0; i < 100; i++) await write(i);
    const starts = [...rvs];
    const watchers = await Promise.all(starts.map((rv) => watch(`/api/v1/namespaces/w5/configmaps?resourceVersion=${rv}`)));
    for (let i = 100; i < 130; i++) await write(i);
    const log = await s.app.get(ChangeLogRepository).changesAfter(starts[0] - 1, 10_000);
    const expected = log.filter((c) => c.key.namespace === 'w5').map((c) => c.revision);
    await Promise.all(
      watchers.map(async (w, i) => {
        const want = expected.filter((r) => r > starts[i]);
        const got = (await w.take(want.length, 15_000)).map((e) => Number(e.object.metadata.resourceVersion));
        assert.deepEqual(got, want, `watcher ${i} from ${starts[i]}`);
      }),
    );
  });
});
