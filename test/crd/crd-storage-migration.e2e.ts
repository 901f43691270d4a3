import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ObjectStoreRepository } from '@plinth/storage';
import request from 'supertest';
import { makeCertificates, type TestCertificates } from '../admission/support/webhook-server.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { installCrd } from './crd-fixtures.js';
import { backendCrd, ConversionWebhookServer } from './support/conversion-webhook-server.js';
import { eventually } from '../support/eventually.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const N = 120;

/** The CRD's StorageVersionMigrated condition, or undefined. */
function migrationCondition(crd: { status?: { conditions?: Array<{ type: string }> } }): Record<string, string> | undefined {
  return crd.status?.conditions?.find((c) => c.type === 'StorageVersionMigrated') as Record<string, string> | undefined;
}

describe('storage version migration: a CRD whose storage version changes has its objects rewritten in the new one', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;
  let certs: TestCertificates;
  let hook: ConversionWebhookServer;

  before(async () => {
    certs = await makeCertificates();
    hook = await ConversionWebhookServer.start(certs);
    s = await startTestServer('crd-migration', { PLINTH_WEBHOOK_TRUSTED_TENANTS: 'default' });
    api = request(s.url);
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'demo' } }).expect(201);
  });
  after(async () => {
    await s.close();
    await hook.close();
  });

  /** Makes v2 the storage version of CRD `name` (v1 stays served); the answer of the PUT. */
  async function switchStorageToV2(name: string): Promise<request.Response> {
    const crd = (await api.get(`${CRDS}/${name}`).expect(200)).body;
    crd.spec.versions[0].storage = false;
    crd.spec.versions[1].storage = true;
    return api.put(`${CRDS}/${name}`).send(crd).expect(200);
  }

  /** The CRD once its StorageVersionMigrated condition satisfies `done`. */
  async function untilMigration(name: string, done: (c: Record<string, string> | undefined) => boolean, ms: number, what: string) {
    return eventually(async () => {
      const cur = (await api.get(`${CRDS}/${name}`).expect(200)).body;
      return done(migrationCondition(cur)) ? cur : false;
    }, { timeoutMs: ms, message: what });
  }

  it('rewrites every object through the conversion webhook (one call per page), then leaves storedVersions at the new version', async () => {
    await installCrd(api, backendCrd(hook.url, certs.caBundle));
    const V1 = '/apis/conv.example.com/v1/namespaces/demo/backends';
    for (let i = 0; i < N; i++) {
      await api.post(V1).send({ apiVersion: 'conv.example.com/v1', kind: 'Backend', metadata: { name: `b${String(i).padStart(3, '0')}` }, spec: { hostPort: `h${i}:${1000 + i}` } }).expect(201);
    }
    hook.requests.length = 0;
    const switched = await switchStorageToV2('backends.conv.example.com');
    assert.deepEqual(switched.body.status.storedVersions, ['v1', 'v2']);

    const done = await untilMigration('backends.conv.example.com', (c) => c?.status === 'True', 20_000, 'the migration to finish');
    assert.deepEqual(done.status.storedVersions, ['v2']);
    assert.deepEqual(
      [migrationCondition(done)?.reason, migrationCondition(done)?.message],
      ['Migrated', `${N} of ${N} objects rewritten in v2`],
    );
    const toV2 = hook.requests.filter((r) => r.desiredAPIVersion === 'conv.example.com/v2');
    assert.equal(toV2.length, 1, 'one conversion call for the page of all objects');
    assert.equal(toV2[0].objects.length, N);

    // Everything is stored in v2 now: reading v2 needs no webhook at all.
    hook.requests.length = 0;
    const list = await api.get('/apis/conv.example.com/v2/namespaces/demo/backends').expect(200);
    assert.equal(list.body.items.length, N);
    assert.deepEqual(list.body.items[7].spec, { host: 'h7', port: 1007 });
    assert.equal(hook.requests.length, 0);
    // And v1 reads convert from v2.
    const one = await api.get('/apis/conv.example.com/v1/namespaces/demo/backends/b007').expect(200);
    assert.deepEqual(one.body.spec, { hostPort: 'h7:1007' });
    assert.equal(hook.requests.length, 1);
  });

  it('migrates 10,000 objects page by page (20 conversion calls of 500), every object stored in the new version once', async () => {
    const big = backendCrd(hook.url, certs.caBundle) as { metadata: { name: string }; spec: Record<string, any> };
    big.metadata.name = 'backends.big.example.com';
    big.spec.group = 'big.example.com';
    await installCrd(api, big);
    const V1 = '/apis/big.example.com/v1/namespaces/demo/backends';
    // One object through the API; the rest written through storage as the API stores them (10,000 creates over
    // HTTPS would dominate the test), each with its own name, uid and spec.
    const first = (await api.post(V1).send({ metadata: { name: 'o00000' }, spec: { hostPort: 'h0:1000' } }).expect(201)).body;
    const objects = s.app.get(ObjectStoreRepository);
    const BIG = 10_000;
    const writers = Array.from({ length: 32 }, async (_, w) => {
      for (let i = 1 + w; i < BIG; i += 32) {
        const name = `o${String(i).padStart(5, '0')}`;
        const body = { ...first, metadata: { ...first.metadata, name, uid: randomUUID() }, spec: { hostPort: `h${i}:${1000 + (i % 60000)}` } };
        delete (body.metadata as Record<string, unknown>).resourceVersion;
        await objects.create({ tenant: 'default', resource: 'backends.big.example.com', namespace: 'demo', name }, body);
      }
    });
    await Promise.all(writers);
    hook.requests.length = 0;
    await switchStorageToV2('backends.big.example.com');
    const done = await untilMigration('backends.big.example.com', (c) => c?.status === 'True', 120_000, 'the migration of 10,000 objects to finish');
    assert.deepEqual(done.status.storedVersions, ['v2']);
    assert.equal(migrationCondition(done)?.message, `${BIG} of ${BIG} objects rewritten in v2`);
    const toV2 = hook.requests.filter((r) => r.desiredAPIVersion === 'big.example.com/v2');
    assert.equal(toV2.length, BIG / 500, 'one conversion call per page of 500');
    assert.equal(toV2.reduce((n, r) => n + r.objects.length, 0), BIG, 'each object converted once');
    // Every object is stored in v2: a v2 list needs no webhook and shows each object's own converted spec.
    hook.requests.length = 0;
    const names = new Set<string>();
    let cont = '';
    do {
      const page = await api.get(`/apis/big.example.com/v2/namespaces/demo/backends?limit=2000${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`).expect(200);
      for (const item of page.body.items) {
        const i = Number(item.metadata.name.slice(1));
        assert.deepEqual(item.spec, { host: `h${i}`, port: 1000 + (i % 60000) }, item.metadata.name);
        names.add(item.metadata.name);
      }
      cont = page.body.metadata.continue ?? '';
    } while (cont);
    assert.equal(names.size, BIG);
    assert.equal(hook.requests.length, 0);
  });

  it('reports a failing webhook in the condition and keeps the old stored version listed', async () => {
    const crdBody = backendCrd(hook.url, certs.caBundle) as { metadata: { name: string }; spec: Record<string, any> };
    crdBody.metadata.name = 'backends.fail.example.com';
    crdBody.spec.group = 'fail.example.com';
    await installCrd(api, crdBody);
    await api.post('/apis/fail.example.com/v1/namespaces/demo/backends').send({ metadata: { name: 'x' }, spec: { hostPort: 'a:1' } }).expect(201);
    hook.mode = 'fail';
    try {
      await switchStorageToV2('backends.fail.example.com');
      const failed = await untilMigration('backends.fail.example.com', (c) => c?.reason === 'MigrationFailed', 20_000, 'the migration to fail');
      assert.deepEqual(failed.status.storedVersions, ['v1', 'v2']);
      assert.match(migrationCondition(failed)!.message, /^migration to v2 failed: Internal error occurred: conversion webhook for fail\.example\.com\/v1, Kind=BackendList failed: cannot convert this backend$/);
    } finally {
      hook.mode = 'convert';
    }
  });

  it('migrates again on every switch of the storage version, v1 -> v2 -> v1 -> v2, trimming storedVersions each time', async () => {
    const crdBody = backendCrd(hook.url, certs.caBundle) as { metadata: { name: string }; spec: Record<string, any> };
    crdBody.metadata.name = 'backends.flip.example.com';
    crdBody.spec.group = 'flip.example.com';
    crdBody.spec.conversion = { strategy: 'None' };
    crdBody.spec.versions[1].schema = crdBody.spec.versions[0].schema;
    await installCrd(api, crdBody);
    for (let i = 0; i < 5; i++) await api.post('/apis/flip.example.com/v1/namespaces/demo/backends').send({ metadata: { name: `f${i}` }, spec: { hostPort: `h:${i}` } }).expect(201);
    const name = 'backends.flip.example.com';
    for (const [step, to] of (['v2', 'v1', 'v2'] as const).entries()) {
      const crd = (await api.get(`${CRDS}/${name}`).expect(200)).body;
      for (const v of crd.spec.versions) v.storage = v.name === to;
      const switched = (await api.put(`${CRDS}/${name}`).send(crd).expect(200)).body;
      const from = to === 'v2' ? 'v1' : 'v2';
      assert.deepEqual(switched.status.storedVersions, [from, to], `switch ${step + 1}: both versions stored until the migration`);
      const done = await untilMigration(
        name,
        (c) => c?.status === 'True' && c.message === `5 of 5 objects rewritten in ${to}`,
        20_000,
        `migration ${step + 1} (to ${to}) to finish`,
      );
      assert.deepEqual(done.status.storedVersions, [to], `switch ${step + 1}: storedVersions trimmed to ${to}`);
    }
  });

  it('migrates a CRD of strategy None by rewriting apiVersion', async () => {
    const crdBody = backendCrd(hook.url, certs.caBundle) as { metadata: { name: string }; spec: Record<string, any> };
    crdBody.metadata.name = 'backends.none.example.com';
    crdBody.spec.group = 'none.example.com';
    crdBody.spec.conversion = { strategy: 'None' };
    crdBody.spec.versions[1].schema = crdBody.spec.versions[0].schema;
    await installCrd(api, crdBody);
    for (let i = 0; i < 30; i++) await api.post('/apis/none.example.com/v1/namespaces/demo/backends').send({ metadata: { name: `n${i}` }, spec: { hostPort: `h:${i}` } }).expect(201);
    await switchStorageToV2('backends.none.example.com');
    const done = await untilMigration('backends.none.example.com', (c) => c?.status === 'True', 20_000, 'the migration to finish');
    assert.deepEqual(done.status.storedVersions, ['v2']);
    assert.equal(migrationCondition(done)?.message, '30 of 30 objects rewritten in v2');
    const obj = await api.get('/apis/none.example.com/v1/namespaces/demo/backends/n3').expect(200);
    assert.deepEqual([obj.body.apiVersion, obj.body.spec], ['none.example.com/v1', { hostPort: 'h:3' }]);
  });
});
