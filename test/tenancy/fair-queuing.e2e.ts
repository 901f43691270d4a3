import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { allow, makeCertificates, type TestCertificates, TestWebhookServer, webhookConfiguration } from '../admission/support/webhook-server.js';
import { certificateIdentity, type ClientIdentity, requestAs } from '../support/credentials.js';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { testKubeConfig } from '../support/client-node.js';
import { CoreV1Api } from '@kubernetes/client-node';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { eventually } from '../support/eventually.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Each tenant has its own seats and queues: a flooding tenant gets 429s, the others are served as if it were not there.
describe('fair queuing of requests per tenant', { timeout: 180_000 }, () => {
  let s: TestServer;
  let certs: TestCertificates;
  let hooks: TestWebhookServer;
  let alice: ClientIdentity;
  let bob: ClientIdentity;

  before(async () => {
    certs = await makeCertificates();
    hooks = await TestWebhookServer.start(certs);
    // Holds each create of tenant flood for a while, so its seats stay taken.
    hooks.on('/slow', async () => {
      await sleep(1500);
      return allow();
    });
    s = await startTestServer('fair-queuing', {
      PLINTH_TENANT_CONCURRENT_REQUESTS: '2',
      PLINTH_TENANT_QUEUE_LENGTH: '2',
      PLINTH_TENANT_QUEUE_WAIT_MS: '30000',
      PLINTH_WEBHOOK_TRUSTED_TENANTS: 'flood',
      PLINTH_WEBHOOK_REFRESH_MS: '100',
    });
    alice = await certificateIdentity('alice');
    bob = await certificateIdentity('bob');
    for (const [name, owner, limits] of [['flood', 'alice', {}], ['quiet', 'bob', {}], ['rated', 'alice', { requestsPerSecond: 2 }]] as const) {
      await request(s.url)
        .post(TENANTS)
        .send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name }, spec: { owners: [{ kind: 'User', name: owner }], limits } })
        .expect(201);
    }
    await request(s.url)
      .post('/clusters/flood/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations')
      .send(webhookConfiguration('Validating', 'slow', [{ name: 'slow.plinth.test', url: hooks.url('/slow'), caBundle: certs.caBundle, timeoutSeconds: 10 }]))
      .expect(201);
    await sleep(300);
  });
  after(async () => {
    await s?.close();
    await hooks?.close();
  });

  it('refuses a flooding tenant\'s excess with 429 and Retry-After while another tenant is served in full', async () => {
    const flooder = requestAs(s.url, alice);
    let settled = 0;
    const flood = Array.from({ length: 20 }, (_, i) =>
      flooder
        .post('/clusters/flood/api/v1/namespaces/default/configmaps')
        .send({ metadata: { name: `f${i}` } })
        .then((r) => {
          settled++;
          return r;
        }),
    );
    // Both of flood's seats are taken by creates held in the webhook.
    await eventually(() => hooks.callsTo('/slow').length >= 2, { timeoutMs: 20_000, intervalMs: 20, message: 'flood holds its seats' });
    const quiet = requestAs(s.url, bob);
    const served: number[] = [];
    for (let i = 0; i < 10; i++) {
      served.push((await quiet.post('/clusters/quiet/api/v1/namespaces/default/configmaps').send({ metadata: { name: `q${i}` } })).status);
      served.push((await quiet.get(`/clusters/quiet/api/v1/namespaces/default/configmaps/q${i}`)).status);
    }
    const whileFlooding = hooks.callsTo('/slow').length < 20;
    const results = await Promise.all(flood);
    assert.deepEqual(served, Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? 201 : 200)), 'tenant quiet got everything');
    assert.ok(whileFlooding && settled <= 20, 'quiet was served while flood was still waiting on its seats');
    const created = results.filter((r) => r.status === 201).length;
    const refused = results.filter((r) => r.status === 429);
    assert.equal(created + refused.length, 20, results.map((r) => r.status).join(','));
    assert.ok(refused.length >= 1, 'the flood was refused in part');
    assert.ok(created >= 4, `seated and queued requests all ran (${created})`);
    assert.equal(refused[0].headers['retry-after'], '1');
    assert.deepEqual(refused[0].body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Too many requests, please try again later.', reason: 'TooManyRequests', details: { retryAfterSeconds: 1 }, code: 429 });
    const metrics = (await request(s.url).get('/metrics').expect(200)).text;
    assert.match(metrics, /plinth_flowcontrol_rejected_requests_total\{tenant="flood",reason="queue-full"\} [1-9]/);
    assert.doesNotMatch(metrics, /plinth_flowcontrol_rejected_requests_total\{tenant="quiet"/);
  });

  it('holds a tenant to spec.limits.requestsPerSecond; kubectl retries the 429s until it gets through', async () => {
    const kc = writeTestKubeconfig(`${s.url}/clusters/rated`, alice);
    // kubectl get --raw takes the path from the server's root, so it names the tenant's prefix itself.
    const runs = await Promise.all(Array.from({ length: 6 }, () => kubectl(kc, ['get', '--raw', '/clusters/rated/api/v1/namespaces/default/configmaps'])));
    for (const r of runs) assert.equal(r.code, 0, r.stderr);
    const metrics = (await request(s.url).get('/metrics').expect(200)).text;
    assert.match(metrics, /plinth_flowcontrol_rejected_requests_total\{tenant="rated",reason="rate"\} [1-9]/);
  });

  it('gives @kubernetes/client-node upstream\'s 429 with Retry-After, and a caller that waits it out gets through', async () => {
    const core = testKubeConfig(`${s.url}/clusters/rated`, alice).makeApiClient(CoreV1Api);
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => core.listNamespacedConfigMap({ namespace: 'default' })));
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected').map((o) => o.reason as { code?: number; headers?: Record<string, string>; body?: string });
    assert.ok(refused.length >= 1, 'a burst over 2 requests/s is refused in part');
    for (const r of refused) {
      assert.equal(r.code, 429);
      assert.ok(Number(r.headers?.['retry-after']) >= 1);
      assert.equal(JSON.parse(String(r.body)).reason, 'TooManyRequests');
    }
    const wait = Number(refused[0].headers?.['retry-after']);
    await new Promise((r) => setTimeout(r, wait * 1000));
    const list = await core.listNamespacedConfigMap({ namespace: 'default' });
    assert.ok(Array.isArray(list.items));
  });

  it('never queues platform administrators, health or version requests', async () => {
    const admin = await Promise.all(Array.from({ length: 12 }, () => request(s.url).get('/clusters/rated/api/v1/namespaces/default/configmaps')));
    assert.deepEqual([...new Set(admin.map((r) => r.status))], [200]);
    const version = await Promise.all(Array.from({ length: 12 }, () => requestAs(s.url, alice).get('/version')));
    assert.deepEqual([...new Set(version.map((r) => r.status))], [200]);
  });
});
