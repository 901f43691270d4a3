import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CustomObjectsApi, type KubeConfig, type KubernetesListObject, type KubernetesObject, makeInformer } from '@kubernetes/client-node';
import request from 'supertest';
import { testKubeConfig } from '../support/client-node.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { installCrd, widgetCrd } from './crd-fixtures.js';
import { eventually } from '../support/eventually.js';

type Widget = KubernetesObject & { spec?: { size?: number } };

describe('@kubernetes/client-node informer over custom resources (checklist 24)', () => {
  let s: TestServer;
  let kc: KubeConfig;
  let objects: CustomObjectsApi;

  before(async () => {
    s = await startTestServer('crd-informer', { PLINTH_BOOKMARK_INTERVAL_SECONDS: '1' });
    const api = request(s.url);
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'demo' } }).expect(201);
    await installCrd(api, widgetCrd());
    kc = testKubeConfig(s.url);
    objects = kc.makeApiClient(CustomObjectsApi);
  });
  after(async () => s.close());

  it('sees ADDED, MODIFIED and DELETED for custom resources', async () => {
    await objects.createNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: 'demo', plural: 'widgets', body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'before' }, spec: { size: 1 } } });
    const list = async () =>
      (await objects.listNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: 'demo', plural: 'widgets' })) as KubernetesListObject<Widget>;
    const informer = makeInformer<Widget>(kc, '/apis/example.com/v1/namespaces/demo/widgets', list);
    const events: string[] = [];
    informer.on('add', (o) => events.push(`add ${o.metadata?.name} ${o.spec?.size}`));
    informer.on('update', (o) => events.push(`update ${o.metadata?.name} ${o.spec?.size}`));
    informer.on('delete', (o) => events.push(`delete ${o.metadata?.name}`));
    informer.on('error', () => undefined);
    await informer.start();
    try {
      await eventually(async () => events.includes('add before 1'), { timeoutMs: 5000, message: 'initial add' });
      await objects.createNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: 'demo', plural: 'widgets', body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 2 } } });
      await eventually(async () => events.includes('add w1 2'), { timeoutMs: 5000, message: 'ADDED' });
      await request(s.url).patch('/apis/example.com/v1/namespaces/demo/widgets/w1').set('Content-Type', 'application/merge-patch+json').send({ spec: { size: 5 } }).expect(200);
      await eventually(async () => events.includes('update w1 5'), { timeoutMs: 5000, message: 'MODIFIED' });
      await objects.deleteNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: 'demo', plural: 'widgets', name: 'w1' });
      await eventually(async () => events.includes('delete w1'), { timeoutMs: 5000, message: 'DELETED' });
      assert.deepEqual(informer.list('demo').map((o) => o.metadata?.name), ['before']);
    } finally {
      await informer.stop();
    }
  });
});
