import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { installCrd, widgetCrd } from '../crd/crd-fixtures.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { allow, makeCertificates, patch, type TestCertificates, TestWebhookServer, webhookConfiguration } from './support/webhook-server.js';

const MWC = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const VWC = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const REFRESH_MS = 100;
const settle = () => new Promise((r) => setTimeout(r, REFRESH_MS * 2 + 100));
const WIDGETS = '/apis/example.com/v1/namespaces/order/widgets';

/**
 * Upstream's order on every write: mutating admission → strategy prepare
 * (system fields, status reset, generation) → validation → validating
 * admission on a copy → storage.
 */
describe('write path order: mutating admission before the strategy', () => {
  let certs: TestCertificates;
  let hooks: TestWebhookServer;
  let s: TestServer;
  let api: ReturnType<typeof request>;

  before(async () => {
    certs = await makeCertificates();
    hooks = await TestWebhookServer.start(certs);
    s = await startTestServer('write-order', { PLINTH_WEBHOOK_TRUSTED_TENANTS: 'default', PLINTH_WEBHOOK_REFRESH_MS: String(REFRESH_MS) });
    api = request(s.url);
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'order', labels: { test: 'order' } } }).expect(201);
    await installCrd(api, widgetCrd({ subresources: { status: {} } }));
    // The mutating webhook colours every widget red, and tries to set its status, on create and update.
    hooks.on('/mutate', (req) =>
      req.object?.metadata?.labels?.mutate === 'yes'
        ? patch([
            { op: 'add', path: '/spec/color', value: 'red' },
            { op: 'add', path: '/status', value: { phase: 'FromWebhook' } },
          ])
        : allow(),
    );
    hooks.on('/validate', () => allow());
    const rules = { apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['widgets'], operations: ['CREATE', 'UPDATE'] };
    const scope = { caBundle: certs.caBundle, namespaceSelector: { matchLabels: { test: 'order' } } };
    await api.post(MWC).send(webhookConfiguration('Mutating', 'order', [{ name: 'mutate.plinth.test', url: hooks.url('/mutate'), ...rules, ...scope }])).expect(201);
    await api.post(VWC).send(webhookConfiguration('Validating', 'order', [{ name: 'validate.plinth.test', url: hooks.url('/validate'), ...rules, ...scope }])).expect(201);
    await settle();
  });
  after(async () => {
    await s?.close();
    await hooks?.close();
  });

  it('bumps generation when a mutating webhook changes spec on an update that changed only labels', async () => {
    const created = await api.post(WIDGETS).send({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 1 } }).expect(201);
    assert.equal(created.body.metadata.generation, 1);
    assert.equal(created.body.spec.color, undefined);
    const updated = await api
      .patch(`${WIDGETS}/w1`)
      .set('Content-Type', 'application/merge-patch+json')
      .send(JSON.stringify({ metadata: { labels: { mutate: 'yes' } } }))
      .expect(200);
    assert.equal(updated.body.spec.color, 'red');
    assert.equal(updated.body.metadata.generation, 2);
    const got = await api.get(`${WIDGETS}/w1`).expect(200);
    assert.equal(got.body.metadata.generation, 2);
    assert.equal(got.body.spec.color, 'red');
  });

  it('discards a status a mutating webhook sets through the main resource, on create and on update', async () => {
    const created = await api
      .post(WIDGETS)
      .send({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w2', labels: { mutate: 'yes' } }, spec: { size: 2 } })
      .expect(201);
    assert.equal(created.body.spec.color, 'red');
    assert.equal(created.body.status, undefined);
    await api.put(`${WIDGETS}/w2/status`).send({ ...created.body, status: { phase: 'Real' } }).expect(200);
    const current = (await api.get(`${WIDGETS}/w2`).expect(200)).body;
    const updated = await api.put(`${WIDGETS}/w2`).send({ ...current, spec: { ...current.spec, size: 3 } }).expect(200);
    assert.deepEqual(updated.body.status, { phase: 'Real' });
    assert.equal(updated.body.spec.size, 3);
    assert.deepEqual((await api.get(`${WIDGETS}/w2`).expect(200)).body.status, { phase: 'Real' });
  });

  it('discards a status the client sends through the main resource', async () => {
    const created = await api.post(WIDGETS).send({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w3' }, spec: { size: 1 }, status: { phase: 'Client' } }).expect(201);
    assert.equal(created.body.status, undefined);
    const updated = await api.put(`${WIDGETS}/w3`).send({ ...created.body, status: { phase: 'Client' } }).expect(200);
    assert.equal(updated.body.status, undefined);
    assert.equal(updated.body.metadata.generation, 1);
  });

  it('shows mutating webhooks the object as decoded and validating webhooks the object as it will be stored', async () => {
    const before = hooks.calls.length;
    await api.post(WIDGETS).send({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w4', labels: { mutate: 'yes' } }, spec: { size: 4 } }).expect(201);
    const calls = hooks.calls.slice(before);
    const mutating = calls.find((c) => c.path === '/mutate')!.request;
    const validating = calls.find((c) => c.path === '/validate')!.request;
    // Upstream fills uid, creationTimestamp and generation after mutating admission (store.create, BeforeCreate).
    assert.equal(mutating.object.metadata.uid, undefined);
    assert.equal(mutating.object.metadata.creationTimestamp, undefined);
    assert.equal(mutating.object.metadata.generation, undefined);
    assert.match(validating.object.metadata.uid, /^[0-9a-f-]{36}$/);
    assert.equal(validating.object.metadata.generation, 1);
    assert.equal(validating.object.spec.color, 'red');
    assert.equal(validating.object.spec.replicas, 1, 'defaults are applied before validating admission');
    assert.equal(validating.object.status, undefined, 'the webhook status was discarded before validating admission');
  });

  it('bumps generation of a webhook configuration when its webhooks change, not when its labels do', async () => {
    const body = webhookConfiguration('Validating', 'gen', [{ name: 'gen.plinth.test', url: hooks.url('/validate'), caBundle: certs.caBundle, namespaceSelector: { matchLabels: { test: 'none' } } }]);
    const created = await api.post(VWC).send(body).expect(201);
    assert.equal(created.body.metadata.generation, 1);
    const labelled = await api.patch(`${VWC}/gen`).set('Content-Type', 'application/merge-patch+json').send(JSON.stringify({ metadata: { labels: { a: 'b' } } })).expect(200);
    assert.equal(labelled.body.metadata.generation, 1);
    const changed = await api
      .patch(`${VWC}/gen`)
      .set('Content-Type', 'application/json-patch+json')
      .send(JSON.stringify([{ op: 'replace', path: '/webhooks/0/timeoutSeconds', value: 5 }]))
      .expect(200);
    assert.equal(changed.body.metadata.generation, 2);
  });
});
