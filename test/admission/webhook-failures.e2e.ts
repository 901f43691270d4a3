import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeTestKubeconfig } from '../support/kubectl.js';
import { promisify } from 'node:util';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { allow, deny, type HookOptions, makeCertificates, type TestCertificates, TestWebhookServer, webhookConfiguration } from './support/webhook-server.js';
import { eventually } from '../support/eventually.js';

const VWC = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const MWC = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const REFRESH_MS = 100;
const settle = () => new Promise((r) => setTimeout(r, REFRESH_MS * 2 + 100));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// Upstream's e2e webhook sleeps 5 s; 1.5 s keeps this file fast and still outlasts a 1 s timeout.
const SLOW_MS = 1500;

describe('admission webhooks: failures, timeouts and a hanging webhook', () => {
  let certs: TestCertificates;
  let hooks: TestWebhookServer;
  let s: TestServer;
  let api: ReturnType<typeof request>;

  async function namespace(name: string): Promise<void> {
    await api.post('/api/v1/namespaces').send({ metadata: { name, labels: { test: name } } }).expect(201);
  }

  function scoped(ns: string, o: HookOptions): HookOptions {
    return { caBundle: certs.caBundle, namespaceSelector: { matchLabels: { test: ns } }, ...o };
  }

  async function register(kind: 'Mutating' | 'Validating', name: string, list: HookOptions[]): Promise<void> {
    await api.post(kind === 'Mutating' ? MWC : VWC).send(webhookConfiguration(kind, name, list)).expect(201);
    await settle();
  }

  before(async () => {
    certs = await makeCertificates();
    hooks = await TestWebhookServer.start(certs);
    hooks.on('/always-allow-delay-5s', async () => {
      await sleep(SLOW_MS);
      return allow();
    });
    hooks.on('/hang', () => 'hang');
    hooks.on('/allow', () => allow());
    // The DB pool is small on purpose: hanging calls must not hold connections.
    s = await startTestServer('webhook-failures', { PLINTH_WEBHOOK_TRUSTED_TENANTS: 'default', PLINTH_WEBHOOK_REFRESH_MS: String(REFRESH_MS), PLINTH_DB_POOL_SIZE: '4' });
    api = request(s.url);
  });
  after(async () => {
    await s?.close();
    await hooks?.close();
  });

  it('fails closed (500 InternalError) when a webhook cannot be called, e.g. no caBundle for its certificate', async () => {
    await namespace('closed');
    await register('Validating', 'closed', [scoped('closed', { name: 'fail-closed.plinth.test', url: hooks.url('/allow'), caBundle: null })]);
    const res = await api.post('/api/v1/namespaces/closed/configmaps').send({ metadata: { name: 'cm' } }).expect(500);
    assert.equal(res.body.reason, 'InternalError');
    assert.equal(
      res.body.message,
      `Internal error occurred: failed calling webhook "fail-closed.plinth.test": Post "${hooks.url('/allow')}?timeout=10s": tls: failed to verify certificate: x509: certificate signed by unknown authority`,
    );
    assert.deepEqual(res.body.details, { causes: [{ message: res.body.message.replace('Internal error occurred: ', '') }] });
  });

  it('honours timeoutSeconds: 1 s with Fail times out (deadline + path?timeout=1s), with Ignore succeeds; 10 s and the default succeed', async () => {
    await namespace('slow');
    const slow = (name: string, extra: Record<string, unknown>) =>
      scoped('slow', { name, url: hooks.url('/always-allow-delay-5s'), objectSelector: { matchLabels: { hook: name } }, ...extra });
    await register('Validating', 'slow', [
      slow('fail-1s.plinth.test', { timeoutSeconds: 1 }),
      slow('ignore-1s.plinth.test', { timeoutSeconds: 1, failurePolicy: 'Ignore' }),
      slow('fail-10s.plinth.test', { timeoutSeconds: 10 }),
      slow('default.plinth.test', {}),
    ]);
    const create = (hook: string) => api.post('/api/v1/namespaces/slow/configmaps').send({ metadata: { generateName: 'x-', labels: { hook } } });
    const failed = await create('fail-1s.plinth.test').expect(500);
    // Plinth answered at its deadline: the webhook was still working on the call when the client got the 500.
    const call = hooks.callsTo('/always-allow-delay-5s').find((c) => (c.request.object as { metadata?: { labels?: Record<string, string> } })?.metadata?.labels?.hook === 'fail-1s.plinth.test');
    assert.ok(call, 'the webhook was called');
    assert.equal(call.answered, false, 'answered at the deadline, not when the webhook finished');
    assert.match(failed.body.message, /context deadline exceeded/);
    assert.match(failed.body.message, /\/always-allow-delay-5s\?timeout=1s/);
    assert.match(failed.body.message, /^Internal error occurred: failed calling webhook "fail-1s.plinth.test": Post "https:\/\/127\.0\.0\.1:\d+\/always-allow-delay-5s\?timeout=1s": context deadline exceeded$/);
    await create('ignore-1s.plinth.test').expect(201);
    await create('fail-10s.plinth.test').expect(201);
    await create('default.plinth.test').expect(201);
    assert.equal(hooks.callsTo('/always-allow-delay-5s').at(-1)!.query, 'timeout=10s');
  });

  it('keeps serving other requests while a webhook hangs, and holds no database connection meanwhile', async () => {
    await namespace('hang');
    await namespace('free');
    await register('Mutating', 'hang', [scoped('hang', { name: 'hang.plinth.test', url: hooks.url('/hang'), timeoutSeconds: 15 })]);
    // More hanging requests than the server has database connections.
    let settled = 0;
    const hanging = Array.from({ length: 8 }, (_, i) =>
      api
        .post('/api/v1/namespaces/hang/configmaps')
        .send({ metadata: { name: `h${i}` } })
        .then((r) => {
          settled++;
          return r;
        }),
    );
    await eventually(async () => assert.equal(hooks.callsTo('/hang').length, 8), { timeoutMs: 10_000 });
    for (let i = 0; i < 10; i++) {
      await api.post('/api/v1/namespaces/free/configmaps').send({ metadata: { name: `f${i}` } }).expect(201);
      await api.get(`/api/v1/namespaces/free/configmaps/f${i}`).expect(200);
    }
    await api.get('/api/v1/namespaces/free/configmaps').expect(200);
    // All of that was served while every hanging request was still waiting for its webhook.
    assert.equal(settled, 0, 'other requests waited for the hanging ones');
    const results = await Promise.all(hanging);
    for (const r of results) {
      assert.equal(r.status, 500);
      assert.match(r.body.message, /failed calling webhook "hang.plinth.test": failed to call webhook: Post ".*\/hang\?timeout=15s": context deadline exceeded/);
    }
  });

  it('treats unusable responses as call failures: transport errors, bad JSON, wrong uid or kind, HTTP errors', async () => {
    await namespace('broken');
    hooks.on('/bad-json', () => ({ raw: 'not json' }));
    hooks.on('/wrong-uid', () => ({ raw: JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'nope', allowed: true } }) }));
    hooks.on('/no-kind', (req) => ({ raw: JSON.stringify({ response: { uid: req.uid, allowed: true } }) }));
    hooks.on('/http-500', () => ({ raw: 'boom', status: 500 }));
    hooks.on('/bad-patch-type', () => ({ response: { allowed: true, patchType: 'Merge', patch: Buffer.from('[{"op":"add","path":"/x","value":1}]').toString('base64') } }));
    const hook = (name: string, p: string) => scoped('broken', { name: `${name}.plinth.test`, url: hooks.url(p), objectSelector: { matchLabels: { hook: name } } });
    await register('Validating', 'broken', [
      hook('refused', '/x'),
      hook('bad-json', '/bad-json'),
      hook('wrong-uid', '/wrong-uid'),
      hook('no-kind', '/no-kind'),
      hook('http-500', '/http-500'),
    ]);
    await register('Mutating', 'broken', [scoped('broken', { name: 'bad-patch-type.plinth.test', url: hooks.url('/bad-patch-type'), objectSelector: { matchLabels: { hook: 'bad-patch-type' } } })]);
    // Point "refused" at a closed port.
    await api
      .patch(`${VWC}/broken`)
      .set('Content-Type', 'application/json-patch+json')
      .send(JSON.stringify([{ op: 'replace', path: '/webhooks/0/clientConfig/url', value: 'https://127.0.0.1:1/x' }]))
      .expect(200);
    await settle();
    const create = async (hook: string) => {
      const res = await api.post('/api/v1/namespaces/broken/configmaps').send({ metadata: { generateName: 'x-', labels: { hook } } }).expect(500);
      assert.equal(res.body.reason, 'InternalError');
      return res.body.message as string;
    };
    assert.match(await create('refused'), /failed calling webhook "refused.plinth.test": Post "https:\/\/127\.0\.0\.1:1\/x\?timeout=10s": dial tcp 127\.0\.0\.1:1: connect: connection refused/);
    assert.match(await create('bad-json'), /failed calling webhook "bad-json.plinth.test": couldn't get version\/kind; json parse error/);
    assert.match(await create('wrong-uid'), /failed calling webhook "wrong-uid.plinth.test": expected response.uid="[0-9a-f-]{36}", got "nope"/);
    assert.match(await create('no-kind'), /expected webhook response of admission.k8s.io\/v1, Kind=AdmissionReview, got \/, Kind=/);
    assert.match(await create('http-500'), /failed calling webhook "http-500.plinth.test": an error on the server \("boom"\) has prevented the request from succeeding/);
    assert.match(await create('bad-patch-type'), /failed calling webhook "bad-patch-type.plinth.test": unsupported patch type "Merge"/);
  });

  it('kubectl shows the denial message', async () => {
    await namespace('kubectl');
    hooks.on('/kubectl', () => deny('the configmap contains unwanted key and value'));
    await register('Validating', 'kubectl', [scoped('kubectl', { name: 'deny-unwanted-configmap-data.k8s.io', url: hooks.url('/kubectl') })]);
    const dir = await mkdtemp(path.join(tmpdir(), 'plinth-kubectl-'));
    try {
      // The harness's kubeconfig: the server's CA and the platform administrator's client certificate.
      const kubeconfig = writeTestKubeconfig(s.url);
      const result = await promisify(execFile)('/usr/bin/kubectl', [`--kubeconfig=${kubeconfig}`, 'create', 'configmap', 'x', '--from-literal=a=b', '-n', 'kubectl'], {
        env: { ...process.env, HOME: dir },
      }).then(
        () => ({ code: 0, stderr: '' }),
        (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
      );
      const kubectl = (...args: string[]) =>
        promisify(execFile)('/usr/bin/kubectl', [`--kubeconfig=${kubeconfig}`, ...args], { env: { ...process.env, HOME: dir } });
      const table = await kubectl('get', 'validatingwebhookconfigurations', 'kubectl');
      assert.match(table.stdout, /^NAME\s+WEBHOOKS\s+AGE\nkubectl\s+1\s+\d+s\n$/);
      const manifest = path.join(dir, 'mwc.yaml');
      await writeFile(
        manifest,
        ['apiVersion: admissionregistration.k8s.io/v1', 'kind: MutatingWebhookConfiguration', 'metadata:', '  name: applied', 'webhooks:', '- name: applied.plinth.test',
          '  clientConfig:', '    url: https://example.com/', '  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [nothing]}]',
          '  sideEffects: None', '  admissionReviewVersions: [v1]', ''].join('\n'),
      );
      assert.match((await kubectl('apply', '-f', manifest)).stdout, /mutatingwebhookconfiguration.admissionregistration.k8s.io\/applied created/);
      assert.notEqual(result.code, 0);
      assert.match(
        result.stderr,
        /error: failed to create configmap: configmaps "x" is forbidden: admission webhook "deny-unwanted-configmap-data.k8s.io" denied the request: the configmap contains unwanted key and value/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
