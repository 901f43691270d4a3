import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { makeCertificates, type TestCertificates } from '../admission/support/webhook-server.js';
import { kubectl, type KubectlResult, writeTestKubeconfig } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { installCrd } from './crd-fixtures.js';
import { backendCrd, ConversionWebhookServer } from './support/conversion-webhook-server.js';
import { eventually } from '../support/eventually.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const V1 = '/apis/conv.example.com/v1/namespaces/demo/backends';
const V2 = '/apis/conv.example.com/v2/namespaces/demo/backends';

function ok(r: KubectlResult): string {
  assert.equal(r.code, 0, `kubectl failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

/** Reads a watch stream's JSON lines until `n` events arrived; aborts the request afterwards. */
async function watchEvents(url: string, n: number, whileWatching: () => Promise<void>): Promise<Array<{ type: string; object: Record<string, any> }>> {
  const ac = new AbortController();
  const res = await fetch(url, { signal: ac.signal });
  assert.equal(res.status, 200);
  const events: Array<{ type: string; object: Record<string, any> }> = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  let acted = false;
  try {
    while (events.length < n) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        events.push(JSON.parse(buffered.slice(0, nl)));
        buffered = buffered.slice(nl + 1);
      }
      if (!acted && events.length > 0) {
        acted = true;
        await whileWatching();
      }
    }
  } finally {
    ac.abort();
  }
  return events;
}

describe('CRD conversion webhooks (strategy Webhook, ConversionReview v1)', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;
  let certs: TestCertificates;
  let hook: ConversionWebhookServer;
  let kc: string;
  const k = (args: string[], input?: string) => kubectl(kc, args, input);

  before(async () => {
    // The certificate also names the in-cluster service the service map points at (TLS is verified for it).
    certs = await makeCertificates(['converter.demo.svc']);
    hook = await ConversionWebhookServer.start(certs);
    s = await startTestServer('crd-conversion', {
      PLINTH_TENANTS: 'acme',
      PLINTH_WEBHOOK_TRUSTED_TENANTS: 'default',
      PLINTH_WEBHOOK_SERVICE_MAP: `demo/converter:8443=https://127.0.0.1:${hook.port}`,
    });
    api = request(s.url);
    kc = writeTestKubeconfig(s.url);
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'demo' } }).expect(201);
    await installCrd(api, backendCrd(hook.url, certs.caBundle));
  });
  after(async () => {
    await s.close();
    await hook.close();
  });

  it('validates spec.conversion at CRD creation as upstream', async () => {
    const bad = (conversion: unknown) => {
      const crd = backendCrd(hook.url, certs.caBundle) as { metadata: { name: string }; spec: Record<string, any> };
      crd.metadata.name = 'others.conv.example.com';
      crd.spec.names = { plural: 'others', singular: 'other', kind: 'Other', listKind: 'OtherList' };
      crd.spec.conversion = conversion;
      return api.post(CRDS).send(crd).expect(422);
    };
    const missing = await bad({ strategy: 'Webhook' });
    assert.match(missing.body.message, /spec\.conversion\.webhookClientConfig: Required value: required when strategy is set to Webhook/);
    assert.match(missing.body.message, /spec\.conversion\.conversionReviewVersions: Required value/);
    const versions = await bad({ strategy: 'Webhook', webhook: { clientConfig: { url: hook.url }, conversionReviewVersions: ['v2'] } });
    assert.match(versions.body.message, /spec\.conversion\.conversionReviewVersions: Invalid value: \[\]string\{"v2"\}: must include at least one of v1, v1beta1|spec\.conversion\.conversionReviewVersions: Invalid value: .*must include at least one of v1, v1beta1/);
    const http = await bad({ strategy: 'Webhook', webhook: { clientConfig: { url: 'http://example.com/convert' }, conversionReviewVersions: ['v1'] } });
    assert.match(http.body.message, /spec\.conversion\.webhookClientConfig\.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https:\/\/host\[\/path\]/);
    const both = await bad({ strategy: 'Webhook', webhook: { clientConfig: { url: hook.url, service: { namespace: 'a', name: 'b' } }, conversionReviewVersions: ['v1'] } });
    assert.match(both.body.message, /spec\.conversion\.webhookClientConfig: Required value: exactly one of url or service is required/);
    const noneWithHook = await bad({ strategy: 'None', webhook: { clientConfig: { url: hook.url }, conversionReviewVersions: ['v1'] } });
    assert.match(noneWithHook.body.message, /spec\.conversion\.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook/);
  });

  it('applies the admission webhooks\' egress policy to conversion webhook URLs (an untrusted tenant may not name loopback)', async () => {
    const refused = await api.post(`/clusters/acme${CRDS}`).send(backendCrd(hook.url, certs.caBundle)).expect(422);
    assert.match(refused.body.message, /spec\.conversion\.webhook\.clientConfig\.url: Forbidden: the webhook egress policy does not allow loopback addresses/);
    const local = await api.post(`/clusters/acme${CRDS}`).send(backendCrd('https://localhost:9443/convert', certs.caBundle)).expect(422);
    assert.match(local.body.message, /spec\.conversion\.webhook\.clientConfig\.url: Forbidden/);
  });

  it('stores objects written in v2 in the storage version v1 and reads them in both versions with kubectl', async () => {
    hook.requests.length = 0;
    ok(await k(['apply', '-f', '-'], 'apiVersion: conv.example.com/v2\nkind: Backend\nmetadata:\n  name: b2\n  namespace: demo\nspec:\n  host: db.internal\n  port: 5432\n'));
    // The body went to the storage version (v1) before it was stored.
    const toStorage = hook.requests.find((r) => r.desiredAPIVersion === 'conv.example.com/v1');
    assert.ok(toStorage, 'a conversion to the storage version');
    assert.deepEqual(toStorage.objects[0].spec, { host: 'db.internal', port: 5432 });
    const asV1 = JSON.parse(ok(await k(['get', 'backends.v1.conv.example.com', 'b2', '-n', 'demo', '-o', 'json'])));
    assert.equal(asV1.apiVersion, 'conv.example.com/v1');
    assert.deepEqual(asV1.spec, { hostPort: 'db.internal:5432' });
    const asV2 = JSON.parse(ok(await k(['get', 'backends.v2.conv.example.com', 'b2', '-n', 'demo', '-o', 'json'])));
    assert.equal(asV2.apiVersion, 'conv.example.com/v2');
    assert.deepEqual(asV2.spec, { host: 'db.internal', port: 5432 });
    assert.equal(asV2.metadata.uid, asV1.metadata.uid);

    ok(await k(['apply', '-f', '-'], 'apiVersion: conv.example.com/v1\nkind: Backend\nmetadata:\n  name: b1\n  namespace: demo\nspec:\n  hostPort: "cache.internal:6379"\n'));
    const b1 = (await api.get(`${V2}/b1`).expect(200)).body;
    assert.deepEqual([b1.apiVersion, b1.spec], ['conv.example.com/v2', { host: 'cache.internal', port: 6379 }]);
  });

  it('updates and patches through the non-storage version (the stored object converted to it and back)', async () => {
    const patched = await api.patch(`${V2}/b1`).set('Content-Type', 'application/merge-patch+json').send({ spec: { port: 6380 } }).expect(200);
    assert.deepEqual(patched.body.spec, { host: 'cache.internal', port: 6380 });
    assert.deepEqual((await api.get(`${V1}/b1`).expect(200)).body.spec, { hostPort: 'cache.internal:6380' });
    ok(await k(['patch', 'backends.v2.conv.example.com', 'b1', '-n', 'demo', '--type=merge', '-p', '{"spec":{"host":"cache2.internal"}}']));
    assert.deepEqual((await api.get(`${V1}/b1`).expect(200)).body.spec, { hostPort: 'cache2.internal:6380' });
    const current = (await api.get(`${V2}/b1`).expect(200)).body;
    const put = await api.put(`${V2}/b1`).send({ ...current, spec: { host: 'cache3.internal', port: 1 } }).expect(200);
    assert.deepEqual(put.body.spec, { host: 'cache3.internal', port: 1 });
    assert.deepEqual((await api.get(`${V1}/b1`).expect(200)).body.spec, { hostPort: 'cache3.internal:1' });
  });

  it('converts a list page in the other version with one webhook call', async () => {
    await api.post(V1).send({ apiVersion: 'conv.example.com/v1', kind: 'Backend', metadata: { name: 'b3' }, spec: { hostPort: 'mq.internal:5672' } }).expect(201);
    hook.requests.length = 0;
    const list = await api.get(V2).expect(200);
    assert.equal(list.body.apiVersion, 'conv.example.com/v2');
    assert.deepEqual(
      list.body.items.map((i: { metadata: { name: string }; spec: unknown; apiVersion: string }) => [i.metadata.name, i.apiVersion, i.spec]),
      [
        ['b1', 'conv.example.com/v2', { host: 'cache3.internal', port: 1 }],
        ['b2', 'conv.example.com/v2', { host: 'db.internal', port: 5432 }],
        ['b3', 'conv.example.com/v2', { host: 'mq.internal', port: 5672 }],
      ],
    );
    assert.equal(hook.requests.length, 1);
    assert.equal(hook.requests[0].objects.length, 3);
    assert.equal(hook.requests[0].desiredAPIVersion, 'conv.example.com/v2');
    const paged = await api.get(`${V2}?limit=2`).expect(200);
    assert.equal(paged.body.items.length, 2);
    assert.equal(hook.requests.length, 2);
    const table = ok(await k(['get', 'backends.v2.conv.example.com', '-n', 'demo', '-o', 'custom-columns=NAME:.metadata.name,HOST:.spec.host,PORT:.spec.port']));
    assert.match(table, /^b3\s+mq\.internal\s+5672$/m);
    // The storage version needs no call.
    hook.requests.length = 0;
    await api.get(V1).expect(200);
    assert.equal(hook.requests.length, 0);
  });

  it('converts watch events (initial state and changes) into the watched version', async () => {
    const events = await watchEvents(`${s.url}${V2}?watch=true&fieldSelector=metadata.name%3Db3`, 2, async () => {
      await api.patch(`${V1}/b3`).set('Content-Type', 'application/merge-patch+json').send({ spec: { hostPort: 'mq2.internal:5673' } }).expect(200);
    });
    assert.deepEqual(
      events.map((e) => [e.type, e.object.apiVersion, e.object.spec]),
      [
        ['ADDED', 'conv.example.com/v2', { host: 'mq.internal', port: 5672 }],
        ['MODIFIED', 'conv.example.com/v2', { host: 'mq2.internal', port: 5673 }],
      ],
    );
  });

  it('converts an event once for all watchers of the version', async () => {
    hook.requests.length = 0;
    const url = `${s.url}${V2}?watch=true&resourceVersion=0&fieldSelector=metadata.name%3Db2`;
    let ready = 0;
    let release!: () => void;
    const both = new Promise<void>((r) => (release = r));
    const watcher = () => watchEvents(url, 2, async () => {
      if (++ready === 2) {
        await api.patch(`${V1}/b2`).set('Content-Type', 'application/merge-patch+json').send({ spec: { hostPort: 'db2.internal:5433' } }).expect(200);
        release();
      }
      await both;
    });
    const [a, b] = await Promise.all([watcher(), watcher()]);
    for (const events of [a, b]) assert.deepEqual(events[1].object.spec, { host: 'db2.internal', port: 5433 });
    // Each watcher's initial state is its own call; the change is converted once for both.
    const forChange = hook.requests.filter((r) => r.objects.some((o) => o.spec?.hostPort === 'db2.internal:5433'));
    assert.equal(forChange.length, 1);
  });

  it('shows DELETE admission the object in the request\'s version, and answers the deleted object in it', async () => {
    const VAP = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies';
    await api.post(VAP).send({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'protected-backends' },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { matchPolicy: 'Exact', resourceRules: [{ apiGroups: ['conv.example.com'], apiVersions: ['v2'], operations: ['DELETE'], resources: ['backends'] }] },
        // Only a v2 oldObject has spec.host: without conversion the rule would let the delete through.
        validations: [{ expression: "!has(oldObject.spec.host) || oldObject.spec.host != 'protected.internal'", message: 'protected backend' }],
      },
    }).expect(201);
    await api.post('/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings').send({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'protected-backends' },
      spec: { policyName: 'protected-backends', validationActions: ['Deny'] },
    }).expect(201);
    await api.post(V1).send({ metadata: { name: 'keep' }, spec: { hostPort: 'protected.internal:1' } }).expect(201);
    await api.post(V1).send({ metadata: { name: 'drop' }, spec: { hostPort: 'plain.internal:2' } }).expect(201);
    // A dry run goes through admission without deleting: it tells when the policy is in force.
    await eventually(async () => (await api.delete(`${V2}/keep?dryRun=All`)).status === 422, { timeoutMs: 10_000, message: 'the policy to deny' });
    const refused = await api.delete(`${V2}/keep`).expect(422);
    assert.match(refused.body.message, /protected backend/);
    const dropped = await api.delete(`${V2}/drop`).expect(200);
    assert.deepEqual([dropped.body.apiVersion, dropped.body.spec], ['conv.example.com/v2', { host: 'plain.internal', port: 2 }]);
    await api.get(`${V1}/keep`).expect(200);
    // The policy matches v2 only (matchPolicy Exact).
    await api.delete(`${V1}/keep`).expect(200);
  });

  it('refuses a response with the wrong number of objects or uid, and a failed conversion, with upstream messages (500)', async () => {
    try {
      hook.mode = 'drop-one';
      const one = await api.get(`${V2}/b1`).expect(500);
      assert.equal(one.body.reason, 'InternalError');
      assert.equal(one.body.message, 'Internal error occurred: conversion webhook for conv.example.com/v1, Kind=Backend returned 0 objects, expected 1');
      const list = await api.get(V2).expect(500);
      assert.equal(list.body.message, 'Internal error occurred: conversion webhook for conv.example.com/v1, Kind=BackendList returned 2 objects, expected 3');
      hook.mode = 'wrong-uid';
      const uid = await api.get(`${V2}/b1`).expect(500);
      assert.match(uid.body.message, /^Internal error occurred: conversion webhook for conv\.example\.com\/v1, Kind=Backend failed: expected response\.uid="[0-9a-f-]+", got "not-the-uid"$/);
      hook.mode = 'fail';
      const failed = await api.post(V2).send({ apiVersion: 'conv.example.com/v2', kind: 'Backend', metadata: { name: 'refused' }, spec: { host: 'x', port: 1 } }).expect(500);
      assert.equal(failed.body.message, 'Internal error occurred: conversion webhook for conv.example.com/v2, Kind=Backend failed: cannot convert this backend');
      hook.mode = 'convert';
      await api.get(`${V2}/refused`).expect(404);
    } finally {
      hook.mode = 'convert';
    }
  });

  it('verifies the webhook\'s certificate against caBundle, and calls a service reference through the service map', async () => {
    const other = await makeCertificates();
    await installCrd(api, backendCrd(hook.url, other.caBundle, 'tls.example.com'));
    await api.post('/apis/tls.example.com/v1/namespaces/demo/backends').send({ metadata: { name: 't1' }, spec: { hostPort: 'a:1' } }).expect(201);
    const untrusted = await api.get('/apis/tls.example.com/v2/namespaces/demo/backends/t1').expect(500);
    assert.match(untrusted.body.message, /conversion webhook for tls\.example\.com\/v1, Kind=Backend failed: Post "https:\/\/127\.0\.0\.1:\d+\/convert\?timeout=30s": tls: failed to verify certificate: x509: certificate signed by unknown authority/);

    const service = { namespace: 'demo', name: 'converter', port: 8443, path: '/convert' };
    await installCrd(api, backendCrd('', '', 'svc.example.com', { service, caBundle: certs.caBundle }));
    await api.post('/apis/svc.example.com/v1/namespaces/demo/backends').send({ metadata: { name: 's1' }, spec: { hostPort: 'svc:2' } }).expect(201);
    const viaService = await api.get('/apis/svc.example.com/v2/namespaces/demo/backends/s1').expect(200);
    assert.deepEqual(viaService.body.spec, { host: 'svc', port: 2 });
    const crd = (await api.get(`${CRDS}/backends.svc.example.com`).expect(200)).body;
    assert.deepEqual(crd.spec.conversion.webhook.clientConfig.service, service);
  });

  it('answers 500 with the transport error when the webhook is down; the storage version still reads', async () => {
    const port = hook.port;
    await hook.close();
    try {
      const down = await api.get(`${V2}/b1`).expect(500);
      assert.equal(down.body.reason, 'InternalError');
      assert.equal(
        down.body.message,
        `Internal error occurred: conversion webhook for conv.example.com/v1, Kind=Backend failed: Post "https://127.0.0.1:${port}/convert?timeout=30s": dial tcp 127.0.0.1:${port}: connect: connection refused`,
      );
      const viaKubectl = await k(['get', 'backends.v2.conv.example.com', 'b1', '-n', 'demo']);
      assert.notEqual(viaKubectl.code, 0);
      assert.match(viaKubectl.stderr, /Error from server \(InternalError\): Internal error occurred: conversion webhook for conv\.example\.com\/v1, Kind=Backend failed: Post "https:\/\/127\.0\.0\.1:\d+\/convert\?timeout=30s": dial tcp/);
      assert.equal((await api.get(`${V1}/b1`).expect(200)).body.spec.hostPort, 'cache3.internal:1');
    } finally {
      hook = await ConversionWebhookServer.start(certs, port);
    }
    await api.get(`${V2}/b1`).expect(200);
  });

  it('counts conversion calls, objects and failures per CRD at /metrics', async () => {
    const text = (await api.get('/metrics').expect(200)).text;
    assert.match(text, /plinth_crd_conversion_webhook_requests_total\{tenant="default",crd="backends\.conv\.example\.com",to_version="v2",code="200",succeeded="true"\} \d+/);
    assert.match(text, /plinth_crd_conversion_webhook_failures_total\{tenant="default",crd="backends\.conv\.example\.com",reason="transport"\} [1-9]/);
    assert.match(text, /plinth_crd_conversion_webhook_failures_total\{tenant="default",crd="backends\.conv\.example\.com",reason="invalid"\} [1-9]/);
    assert.match(text, /plinth_crd_conversion_webhook_duration_seconds_count\{tenant="default",crd="backends\.conv\.example\.com",to_version="v2",succeeded="true"\} \d+/);
  });
});
