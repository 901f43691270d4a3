import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { allow, makeCertificates, type TestCertificates, TestWebhookServer, webhookConfiguration } from '../admission/support/webhook-server.js';
import { certificateIdentity, requestAs, tokenIdentity } from '../support/credentials.js';
import { grantInNamespace } from '../support/rbac.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { eventually } from '../support/eventually.js';

// The identity authentication establishes is the one admission webhooks see in AdmissionReview.userInfo.
describe('authenticated identities reach admission', { timeout: 120_000 }, () => {
  let certs: TestCertificates;
  let hooks: TestWebhookServer;
  let s: TestServer;

  before(async () => {
    certs = await makeCertificates();
    hooks = await TestWebhookServer.start(certs);
    hooks.on('/who', () => allow());
    // The webhook server listens on loopback: the documented local-development exemption.
    s = await startTestServer('authn_admission', { PLINTH_WEBHOOK_TRUSTED_TENANTS: 'default', PLINTH_WEBHOOK_REFRESH_MS: '100' });
    await request(s.url).post('/api/v1/namespaces').send({ metadata: { name: 'who', labels: { test: 'who' } } }).expect(201);
    // The identities below may edit in namespace who, and have no other rights.
    await grantInNamespace(s.url, 'who', 'writers-edit', 'edit', [
      { kind: 'ServiceAccount', name: 'bot', namespace: 'who' },
      { kind: 'Group', name: 'qa' },
      { kind: 'Group', name: 'ops' },
    ]);
    await request(s.url)
      .post('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations')
      .send(webhookConfiguration('Validating', 'who', [{ name: 'who.plinth.test', url: hooks.url('/who'), caBundle: certs.caBundle, namespaceSelector: { matchLabels: { test: 'who' } } }]))
      .expect(201);
    await new Promise((r) => setTimeout(r, 400));
  });
  after(async () => {
    await s?.close();
    await hooks?.close();
  });

  it('sends the ServiceAccount user: username, uid, groups and extra', async () => {
    await request(s.url).post('/api/v1/namespaces/who/serviceaccounts').send({ metadata: { name: 'bot' } }).expect(201);
    const sa = (await request(s.url).get('/api/v1/namespaces/who/serviceaccounts/bot').expect(200)).body;
    const token = (await request(s.url).post('/api/v1/namespaces/who/serviceaccounts/bot/token').send({ spec: {} }).expect(201)).body.status.token;
    await requestAs(s.url, tokenIdentity(token)).post('/api/v1/namespaces/who/configmaps').send({ metadata: { name: 'by-bot' } }).expect(201);
    const call = await eventually(async () => hooks.callsTo('/who').find((c) => c.request.name === 'by-bot'), { timeoutMs: 5000 });
    const u = call!.request.userInfo as { username: string; uid?: string; groups: string[]; extra?: Record<string, string[]> };
    assert.equal(u.username, 'system:serviceaccount:who:bot');
    assert.equal(u.uid, sa.metadata.uid);
    assert.deepEqual(u.groups, ['system:serviceaccounts', 'system:serviceaccounts:who', 'system:authenticated']);
    assert.match(u.extra?.['authentication.kubernetes.io/credential-id']?.[0] ?? '', /^JTI=[0-9a-f-]{36}$/);
    assert.deepEqual(u.extra?.['tenancy.plinth.dev/tenant'], ['default']);
  });

  it('sends a client certificate\'s user, and the impersonated user when impersonating', async () => {
    await requestAs(s.url, await certificateIdentity('carol', ['qa'])).post('/api/v1/namespaces/who/configmaps').send({ metadata: { name: 'by-carol' } }).expect(201);
    await request(s.url).post('/api/v1/namespaces/who/configmaps').set('Impersonate-User', 'dave').set('Impersonate-Group', 'ops').send({ metadata: { name: 'as-dave' } }).expect(201);
    const carol = await eventually(async () => hooks.callsTo('/who').find((c) => c.request.name === 'by-carol'), { timeoutMs: 5000 });
    assert.deepEqual(carol!.request.userInfo, { username: 'carol', groups: ['qa', 'system:authenticated'] });
    const dave = await eventually(async () => hooks.callsTo('/who').find((c) => c.request.name === 'as-dave'), { timeoutMs: 5000 });
    assert.deepEqual(dave!.request.userInfo, { username: 'dave', groups: ['ops', 'system:authenticated'] });
  });
});
