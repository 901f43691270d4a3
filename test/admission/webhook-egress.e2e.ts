import assert from 'node:assert/strict';
import os from 'node:os';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { allow, makeCertificates, type TestCertificates, TestWebhookServer, webhookConfiguration } from './support/webhook-server.js';

const VWC = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const ACME = '/clusters/acme';

// The platform's egress policy: tenant "acme" is untrusted, "default" has the local-development exemption.
describe('admission webhooks: egress policy (no SSRF through webhooks)', () => {
  let certs: TestCertificates;
  let hooks: TestWebhookServer;
  let s: TestServer;
  let api: ReturnType<typeof request>;

  before(async () => {
    certs = await makeCertificates();
    hooks = await TestWebhookServer.start(certs);
    hooks.on('/allow', () => allow());
    s = await startTestServer('webhook-egress', { PLINTH_TENANTS: 'acme', PLINTH_WEBHOOK_TRUSTED_TENANTS: 'default', PLINTH_WEBHOOK_REFRESH_MS: '100' });
    api = request(s.url);
  });
  after(async () => {
    await s?.close();
    await hooks?.close();
  });

  it('refuses at registration loopback, localhost, link-local and unspecified addresses for an untrusted tenant, with a cause per webhook', async () => {
    const urls = ['https://127.0.0.1:9443/x', 'https://localhost:1/', 'https://[::1]:8443/', 'https://169.254.169.254/latest/meta-data', 'https://0.0.0.0:22/', 'https://[::ffff:127.0.0.1]/'];
    const body = webhookConfiguration('Validating', 'probe', urls.map((url, i) => ({ name: `h${i}.plinth.test`, url })));
    const res = await api.post(`${ACME}${VWC}`).send(body).expect(422);
    assert.equal(res.body.reason, 'Invalid');
    assert.equal(res.body.details.kind, 'ValidatingWebhookConfiguration');
    assert.deepEqual(
      res.body.details.causes.map((c: { field: string }) => c.field),
      urls.map((_, i) => `webhooks[${i}].clientConfig.url`),
    );
    for (const c of res.body.details.causes) {
      assert.equal(c.reason, 'FieldValueForbidden');
      assert.match(c.message, /^Forbidden: the webhook egress policy does not allow (loopback|link-local) addresses$/);
    }
    assert.match(res.body.message, /^ValidatingWebhookConfiguration\.admissionregistration\.k8s\.io "probe" is invalid: \[webhooks\[0\]\.clientConfig\.url: Forbidden: the webhook egress policy does not allow loopback addresses, /);
  });

  it('lets the trusted tenant call loopback (local development), but never link-local', async () => {
    const ok = webhookConfiguration('Validating', 'local', [{ name: 'local.plinth.test', url: hooks.url('/allow'), caBundle: certs.caBundle }]);
    await api.post(VWC).send(ok).expect(201);
    const metadata = webhookConfiguration('Validating', 'metadata', [{ name: 'md.plinth.test', url: 'https://169.254.169.254/' }]);
    const res = await api.post(VWC).send(metadata).expect(422);
    assert.match(res.body.message, /webhooks\[0\]\.clientConfig\.url: Forbidden: the webhook egress policy does not allow link-local addresses/);
    await api.delete(`${VWC}/local`).expect(200);
  });

  it('checks again after DNS resolution: a name that resolves to this host is refused at call time, and nothing is sent', async () => {
    // The host's own name resolves to a loopback or own address; it cannot be told from the name at registration.
    const url = `https://${os.hostname()}:${hooks.port}/allow`;
    const config = webhookConfiguration('Validating', 'by-name', [{ name: 'by-name.plinth.test', url, caBundle: certs.caBundle, failurePolicy: 'Fail' }]);
    await api.post(`${ACME}${VWC}`).send(config).expect(201);
    await new Promise((r) => setTimeout(r, 300));
    const res = await api.post(`${ACME}/api/v1/namespaces/default/configmaps`).send({ metadata: { name: 'x' } }).expect(500);
    assert.match(res.body.message, /^Internal error occurred: failed calling webhook "by-name\.plinth\.test": Post "https:\/\/[^"]+": the webhook egress policy does not allow (loopback addresses|the server's own addresses)$/);
    assert.equal(hooks.callsTo('/allow').length, 0);
  });
});
