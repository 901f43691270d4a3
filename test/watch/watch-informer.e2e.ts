import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, makeInformer, type V1ConfigMap } from '@kubernetes/client-node';
import request from 'supertest';
import { testKubeConfig } from '../support/client-node.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { ChangeLogRepository } from '@plinth/storage';
import { ROOT_CA_CONFIGMAP } from '../support/root-ca.js';
import { eventually } from '../support/eventually.js';

// An informer (list, then watch, re-watching from its last resourceVersion every time the server
// closes the watch, here every 1–2 s) under concurrent writers.
describe('watch: @kubernetes/client-node informer under concurrent writers', { timeout: 120_000 }, () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;

  before(async () => {
    s = await startTestServer('watch_informer', { PLINTH_MAX_WATCH_SECONDS: '2', PLINTH_BOOKMARK_INTERVAL_SECONDS: '1' });
    api = request(s.url);
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'inf' } }).expect(201);
  });
  after(async () => s.close());

  it('ends with a cache equal to a fresh list, having seen exactly the change log', async () => {
    const kc = testKubeConfig(s.url);
    const core = kc.makeApiClient(CoreV1Api);
    let listRevision = 0;
    const informer = makeInformer<V1ConfigMap>(kc, '/api/v1/namespaces/inf/configmaps', async () => {
      const list = await core.listNamespacedConfigMap({ namespace: 'inf' });
      if (!listRevision) listRevision = Number(list.metadata?.resourceVersion);
      return list;
    });
    const seen: number[] = [];
    const errors: unknown[] = [];
    let lists = 0;
    // The namespace's kube-root-ca.crt (published with it, before the informer's list) is in the list, not in the changes after it.
    const record = (o: V1ConfigMap) => void (o.metadata?.name !== ROOT_CA_CONFIGMAP && seen.push(Number(o.metadata?.resourceVersion)));
    informer.on('add', record);
    informer.on('update', record);
    informer.on('delete', record);
    informer.on('error', (e) => errors.push(e));
    informer.on('connect', () => lists++);
    await informer.start();
    await eventually(() => listRevision > 0, { message: 'the informer listed' });

    const names = Array.from({ length: 12 }, (_, i) => `cm-${i}`);
    const writer = async (w: number) => {
      for (let i = 0; i < 70; i++) {
        const name = names[(i * 7 + w * 3) % names.length];
        const path = `/api/v1/namespaces/inf/configmaps/${name}`;
        const op = (i + w) % 5;
        if (op === 4) await api.delete(path);
        else {
          const res = await api.put(path).send({ metadata: { name }, data: { w: String(w), i: String(i) } });
          if (res.status === 404) await api.post('/api/v1/namespaces/inf/configmaps').send({ metadata: { name }, data: { w: String(w) } });
        }
        if (i % 10 === 0) await new Promise((r) => setTimeout(r, 30));
      }
    };
    await Promise.all([0, 1, 2, 3].map(writer));

    const fresh = (await api.get('/api/v1/namespaces/inf/configmaps').expect(200)).body;
    const want = new Map<string, string>(fresh.items.map((o: V1ConfigMap) => [o.metadata!.name!, o.metadata!.resourceVersion!]));
    const cacheState = () => new Map(informer.list('inf').map((o) => [o.metadata!.name!, o.metadata!.resourceVersion!]));
    await eventually(() => JSON.stringify([...cacheState()].sort()) === JSON.stringify([...want].sort()), { timeoutMs: 15_000, message: 'the informer cache matches a fresh list' });
    assert.deepEqual(cacheState(), want);
    const log = (await s.app.get(ChangeLogRepository).changesAfter(listRevision, 100_000)).filter((c) => c.key.namespace === 'inf').map((c) => c.revision);
    await eventually(() => seen.length >= log.length, { timeoutMs: 5000, message: 'every change seen' });
    assert.deepEqual(seen, log, 'the informer saw every change exactly once, in order');
    assert.deepEqual(errors, []);
    // The writers can finish within one watch period; the server ends each watch within 1–2 s.
    await eventually(() => lists >= 2, { timeoutMs: 10_000, message: 'the informer re-watched' });
    await informer.stop();
    assert.ok(lists >= 2, `the informer re-watched (${lists} connects)`);
  });
});
