import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { makeCertificates, patch, type ReviewRequest, type TestCertificates, TestWebhookServer, webhookConfiguration } from './support/webhook-server.js';

const MWC = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const REFRESH_MS = 100;

describe('server-side apply through mutating admission', () => {
  let certs: TestCertificates;
  let hooks: TestWebhookServer;
  let s: TestServer;
  let api: ReturnType<typeof request>;
  const seen: ReviewRequest[] = [];

  before(async () => {
    certs = await makeCertificates();
    hooks = await TestWebhookServer.start(certs);
    s = await startTestServer('apply-admission', {
      // The webhook server listens on loopback: the documented local-development exemption.
      PLINTH_WEBHOOK_TRUSTED_TENANTS: 'default',
      PLINTH_WEBHOOK_REFRESH_MS: String(REFRESH_MS),
    });
    api = request(s.url);
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'apply-adm', labels: { test: 'apply-adm' } } }).expect(201);
    hooks.on('/mutate', (req) => {
      seen.push(req);
      if (req.object?.metadata?.labels?.mode === 'break') {
        return patch([{ op: 'replace', path: '/metadata/managedFields', value: [{ manager: 'webhook', operation: 'Bogus' }] }]);
      }
      return patch([{ op: 'add', path: '/data/added-by-webhook', value: 'yes' }]);
    });
    await api
      .post(MWC)
      .send(
        webhookConfiguration('Mutating', 'apply-adm', [
          { name: 'apply.plinth.test', url: hooks.url('/mutate'), caBundle: certs.caBundle, namespaceSelector: { matchLabels: { test: 'apply-adm' } } },
        ]),
      )
      .expect(201);
    await new Promise((r) => setTimeout(r, REFRESH_MS * 2 + 100));
  });
  after(async () => {
    await s?.close();
    await hooks?.close();
  });

  const apply = (name: string, labels?: Record<string, string>) =>
    api
      .patch(`/api/v1/namespaces/apply-adm/configmaps/${name}?fieldManager=alice`)
      .set('Content-Type', 'application/apply-patch+yaml')
      .send(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: labels ? { name, labels } : { name }, data: { a: '1' } }));

  it('webhooks see the applied object with its managedFields; their own changes belong to no manager', async () => {
    const res = await apply('cm').expect(201);
    const review = seen.find((r) => r.name === 'cm' || r.object?.metadata?.name === 'cm');
    assert.ok(review, 'the webhook was called');
    assert.deepEqual(review.object.data, { a: '1' });
    assert.deepEqual(review.object.metadata.managedFields.map((e: { manager: string; operation: string }) => [e.manager, e.operation]), [['alice', 'Apply']]);
    assert.deepEqual(res.body.data, { a: '1', 'added-by-webhook': 'yes' });
    assert.deepEqual(res.body.metadata.managedFields.map((e: { fieldsV1: unknown }) => e.fieldsV1), [{ 'f:data': { 'f:a': {} } }]);
  });

  it('managedFields a webhook leaves invalid are restored, with upstream warning', async () => {
    const res = await apply('broken', { mode: 'break' }).expect(201);
    assert.match(String(res.headers.warning), /\.metadata\.managedFields was in an invalid state after admission; this could be caused by an outdated mutating admission controller; please fix your requests: operation must be `Apply` or `Update`/);
    assert.deepEqual(res.body.metadata.managedFields.map((e: { manager: string }) => e.manager), ['alice']);
  });
});
