import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubernetesObjectApi, PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
import { testKubeConfig } from '../support/client-node.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

type ConfigMap = KubernetesObject & { data?: Record<string, string> };

describe('@kubernetes/client-node KubernetesObjectApi against Plinth', () => {
  let s: TestServer;
  let client: KubernetesObjectApi;

  before(async () => {
    s = await startTestServer('client-node');
    const kc = testKubeConfig(s.url);
    client = KubernetesObjectApi.makeApiClient(kc);
  });
  after(async () => s.close());

  it('creates, reads, patches, lists and deletes', async () => {
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'cn' } });
    const created = await client.create<ConfigMap>({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one', namespace: 'cn', labels: { app: 'x' } }, data: { a: '1' } });
    assert.ok(created.metadata?.uid);
    const read = await client.read<ConfigMap>({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one', namespace: 'cn' } });
    assert.deepEqual(read.data, { a: '1' });
    const patched = await client.patch<ConfigMap>(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one', namespace: 'cn' }, data: { b: '2' } },
      undefined,
      undefined,
      undefined,
      undefined,
      PatchStrategy.MergePatch,
    );
    assert.deepEqual(patched.data, { a: '1', b: '2' });
    await client.create<ConfigMap>({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'two', namespace: 'cn' } });
    const list = await client.list<ConfigMap>('v1', 'ConfigMap', 'cn', undefined, undefined, undefined, undefined, 'app=x');
    assert.deepEqual(list.items.map((i) => i.metadata?.name), ['one']);
    const status = await client.delete({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one', namespace: 'cn' } });
    assert.equal(status.status, 'Success');
    await assert.rejects(
      client.read({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one', namespace: 'cn' } }),
      (e: unknown) => (e as { code?: number }).code === 404,
    );
  });
  it('server-side apply through KubernetesObjectApi.patch: creates, conflicts (409) and forces', async () => {
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'cn-ssa' } });
    const spec = (v: string): ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied', namespace: 'cn-ssa' }, data: { k: v } });
    const created = await client.patch<ConfigMap>(spec('1'), undefined, undefined, 'controller-a', undefined, PatchStrategy.ServerSideApply);
    assert.deepEqual(created.data, { k: '1' });
    assert.equal(created.metadata?.managedFields?.[0]?.manager, 'controller-a');
    assert.equal(created.metadata?.managedFields?.[0]?.operation, 'Apply');
    await assert.rejects(
      client.patch<ConfigMap>(spec('2'), undefined, undefined, 'controller-b', undefined, PatchStrategy.ServerSideApply),
      (e: unknown) => {
        const body = (e as { body?: unknown }).body;
        const status = (typeof body === 'string' ? JSON.parse(body) : body) as { message?: string };
        return (e as { code?: number }).code === 409 && status.message === 'Apply failed with 1 conflict: conflict with "controller-a": .data.k';
      },
    );
    const forced = await client.patch<ConfigMap>(spec('2'), undefined, undefined, 'controller-b', true, PatchStrategy.ServerSideApply);
    assert.deepEqual(forced.data, { k: '2' });
    assert.deepEqual(forced.metadata?.managedFields?.map((e) => e.manager), ['controller-b']);
  });
});
