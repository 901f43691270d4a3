import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import {
  allow,
  deny,
  type HookOptions,
  makeCertificates,
  patch,
  type TestCertificates,
  TestWebhookServer,
  webhookConfiguration,
} from './support/webhook-server.js';

const MWC = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const VWC = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const REFRESH_MS = 100;
const settle = () => new Promise((r) => setTimeout(r, REFRESH_MS * 2 + 100));

describe('admission webhooks: calls, denials, patches', () => {
  let certs: TestCertificates;
  let hooks: TestWebhookServer;
  let s: TestServer;
  let api: ReturnType<typeof request>;

  /** A namespace labelled `test=<name>`, so a test's webhooks select only its own namespace. */
  async function namespace(name: string, labels: Record<string, string> = {}): Promise<void> {
    await api.post('/api/v1/namespaces').send({ metadata: { name, labels: { test: name, ...labels } } }).expect(201);
  }

  /** Hook options scoped to the namespace `test=<ns>`, trusting the test CA. */
  function scoped(ns: string, o: HookOptions): HookOptions {
    return { caBundle: certs.caBundle, namespaceSelector: { matchLabels: { test: ns } }, ...o };
  }

  async function register(kind: 'Mutating' | 'Validating', name: string, list: HookOptions[]): Promise<void> {
    await api.post(kind === 'Mutating' ? MWC : VWC).send(webhookConfiguration(kind, name, list)).expect(201);
    await settle();
  }

  before(async () => {
    certs = await makeCertificates(['webhook.plinth-test.svc']);
    hooks = await TestWebhookServer.start(certs);
    s = await startTestServer('webhook-calls', {
      // The webhook servers listen on loopback: the documented local-development exemption.
      PLINTH_WEBHOOK_TRUSTED_TENANTS: 'default,acme',
      PLINTH_TENANTS: 'acme',
      PLINTH_WEBHOOK_REFRESH_MS: String(REFRESH_MS),
      PLINTH_WEBHOOK_SERVICE_MAP: `plinth-test/webhook:8443=https://127.0.0.1:${hooks.port}/base`,
    });
    api = request(s.url);
  });
  after(async () => {
    await s?.close();
    await hooks?.close();
  });

  it('denies configmap create, PUT and strategic-merge PATCH with the upstream message; a namespace excluded by NotIn is allowed', async () => {
    await namespace('deny-cm');
    await namespace('deny-cm-skip', { 'skip-webhook': 'yes' });
    hooks.on('/deny-cm', (req) =>
      req.object?.data?.['webhook-e2e-test'] === 'webhook-disallow' ? deny('the configmap contains unwanted key and value') : allow(),
    );
    await register('Validating', 'deny-cm', [
      {
        name: 'deny-unwanted-configmap-data.k8s.io',
        url: hooks.url('/deny-cm'),
        caBundle: certs.caBundle,
        operations: ['CREATE', 'UPDATE'],
        namespaceSelector: { matchExpressions: [{ key: 'skip-webhook', operator: 'NotIn', values: ['yes'] }, { key: 'test', operator: 'Exists' }] },
      },
    ]);
    const bad = { metadata: { name: 'bad' }, data: { 'webhook-e2e-test': 'webhook-disallow' } };
    const res = await api.post('/api/v1/namespaces/deny-cm/configmaps').send(bad).expect(403);
    assert.equal(res.body.reason, 'Forbidden');
    assert.equal(
      res.body.message,
      'configmaps "bad" is forbidden: admission webhook "deny-unwanted-configmap-data.k8s.io" denied the request: the configmap contains unwanted key and value',
    );
    assert.deepEqual(res.body.details, { name: 'bad', kind: 'configmaps' });
    await api.get('/api/v1/namespaces/deny-cm/configmaps/bad').expect(404);
    await api.post('/api/v1/namespaces/deny-cm/configmaps').send({ metadata: { name: 'good' }, data: { a: 'b' } }).expect(201);
    const put = await api.put('/api/v1/namespaces/deny-cm/configmaps/good').send({ metadata: { name: 'good' }, data: bad.data }).expect(403);
    assert.match(put.body.message, /the configmap contains unwanted key and value/);
    const smp = await api
      .patch('/api/v1/namespaces/deny-cm/configmaps/good')
      .set('Content-Type', 'application/strategic-merge-patch+json')
      .send(JSON.stringify({ data: bad.data }))
      .expect(403);
    assert.match(smp.body.message, /the configmap contains unwanted key and value/);
    await api.post('/api/v1/namespaces/deny-cm-skip/configmaps').send(bad).expect(201);
  });

  it('sends every AdmissionReview field, and oldObject on DELETE (which can be denied)', async () => {
    await namespace('fields');
    hooks.on('/fields', (req) =>
      req.operation === 'DELETE' && req.oldObject?.data?.protect === 'yes'
        ? deny(`configmap ${req.name} cannot be deleted because it contains unwanted key and value`)
        : allow(),
    );
    await register('Validating', 'fields', [scoped('fields', { name: 'fields.plinth.test', url: hooks.url('/fields'), operations: ['*'] })]);
    await api.post('/api/v1/namespaces/fields/configmaps?fieldManager=me').send({ metadata: { name: 'cm' }, data: { protect: 'yes' } }).expect(201);
    const create = hooks.callsTo('/fields').at(-1)!;
    assert.equal(create.apiVersion, 'admission.k8s.io/v1');
    assert.match(create.query, /^timeout=10s$/);
    const r = create.request;
    assert.match(r.uid, /^[0-9a-f-]{36}$/);
    assert.deepEqual(r.kind, { group: '', version: 'v1', kind: 'ConfigMap' });
    assert.deepEqual(r.resource, { group: '', version: 'v1', resource: 'configmaps' });
    assert.deepEqual(r.requestKind, r.kind);
    assert.deepEqual(r.requestResource, r.resource);
    assert.equal(r.name, 'cm');
    assert.equal(r.namespace, 'fields');
    assert.equal(r.operation, 'CREATE');
    // The authenticated caller: the harness's platform-administrator client certificate (CN, O groups).
    assert.equal(r.userInfo.username, 'plinth-admin');
    assert.deepEqual(r.userInfo.groups, ['system:masters', 'system:authenticated']);
    assert.equal(r.object.data.protect, 'yes');
    assert.equal(r.oldObject, null);
    assert.equal(r.dryRun, false);
    assert.equal(r.options.kind, 'CreateOptions');
    assert.equal(r.options.fieldManager, 'me');
    const del = await api.delete('/api/v1/namespaces/fields/configmaps/cm').expect(403);
    assert.equal(
      del.body.message,
      'configmaps "cm" is forbidden: admission webhook "fields.plinth.test" denied the request: configmap cm cannot be deleted because it contains unwanted key and value',
    );
    const d = hooks.callsTo('/fields').at(-1)!.request;
    assert.equal(d.operation, 'DELETE');
    assert.equal(d.object, null);
    assert.equal(d.oldObject.data.protect, 'yes');
    assert.equal(d.options.kind, 'DeleteOptions');
    assert.notEqual(d.uid, r.uid);
  });

  it('applies two mutating webhooks of one configuration serially, in order (mutation-start, stage-1, stage-2)', async () => {
    await namespace('mutate');
    hooks.on('/stage-1', (req) => patch([{ op: 'add', path: '/data/mutation-stage-1', value: 'yes' }], { warnings: [`stage-1 saw ${Object.keys(req.object.data).join(',')}`] }));
    hooks.on('/stage-2', (req) => patch([{ op: 'add', path: '/data/mutation-stage-2', value: 'yes' }], { warnings: [`stage-2 saw ${Object.keys(req.object.data).sort().join(',')}`] }));
    await register('Mutating', 'mutate', [
      scoped('mutate', { name: 'adding-configmap-data-stage1.k8s.io', url: hooks.url('/stage-1') }),
      scoped('mutate', { name: 'adding-configmap-data-stage2.k8s.io', url: hooks.url('/stage-2') }),
    ]);
    const res = await api.post('/api/v1/namespaces/mutate/configmaps').send({ metadata: { name: 'cm' }, data: { 'mutation-start': 'yes' } }).expect(201);
    assert.deepEqual(res.body.data, { 'mutation-start': 'yes', 'mutation-stage-1': 'yes', 'mutation-stage-2': 'yes' });
    const warnings = String(res.headers.warning);
    assert.match(warnings, /299 - "stage-1 saw mutation-start"/);
    assert.match(warnings, /299 - "stage-2 saw mutation-stage-1,mutation-start"/);
    const got = await api.get('/api/v1/namespaces/mutate/configmaps/cm').expect(200);
    assert.deepEqual(got.body.data, res.body.data);
  });

  it('re-validates a patched object: undeclared fields are pruned, wrong types fail with 500, invalid results with 422', async () => {
    await namespace('revalidate');
    hooks.on('/revalidate', (req) => {
      const mode = req.object.metadata.labels?.mode;
      if (mode === 'unknown') return patch([{ op: 'add', path: '/extra', value: 'x' }]);
      if (mode === 'type') return patch([{ op: 'add', path: '/data', value: 7 }]);
      return patch([{ op: 'add', path: '/data/bad key', value: 'x' }]);
    });
    await register('Mutating', 'revalidate', [scoped('revalidate', { name: 'revalidate.plinth.test', url: hooks.url('/revalidate') })]);
    const ok = await api.post('/api/v1/namespaces/revalidate/configmaps').send({ metadata: { name: 'a', labels: { mode: 'unknown' } } }).expect(201);
    assert.equal(ok.body.extra, undefined);
    const typed = await api.post('/api/v1/namespaces/revalidate/configmaps').send({ metadata: { name: 'b', labels: { mode: 'type' } } }).expect(500);
    assert.equal(typed.body.reason, 'InternalError');
    assert.match(typed.body.message, /^Internal error occurred: ConfigMap in version "v1" cannot be handled as a ConfigMap/);
    const invalid = await api.post('/api/v1/namespaces/revalidate/configmaps').send({ metadata: { name: 'c', labels: { mode: 'key' } }, data: {} }).expect(422);
    assert.match(invalid.body.message, /data\[bad key\]/);
  });

  it('refuses a patch on DELETE with 500 "attempted to modify the object"', async () => {
    await namespace('del-patch');
    hooks.on('/del-patch', () => patch([{ op: 'add', path: '/metadata/labels', value: { a: 'b' } }]));
    await api.post('/api/v1/namespaces/del-patch/configmaps').send({ metadata: { name: 'cm' } }).expect(201);
    await register('Mutating', 'del-patch', [scoped('del-patch', { name: 'del-patch.plinth.test', url: hooks.url('/del-patch'), operations: ['DELETE'] })]);
    const res = await api.delete('/api/v1/namespaces/del-patch/configmaps/cm').expect(500);
    assert.equal(
      res.body.message,
      'Internal error occurred: admission webhook "del-patch.plinth.test" attempted to modify the object, which is not supported for this operation',
    );
  });

  it('reinvokes an IfNeeded webhook when a later webhook changed the object', async () => {
    await namespace('reinvoke');
    hooks.on('/first', (req) => {
      const seen = req.object.metadata.labels?.second === 'done' ? 'yes' : 'no';
      return patch([{ op: 'add', path: '/metadata/annotations', value: { 'first-saw-second': seen } }]);
    });
    hooks.on('/second', (req) => patch([{ op: 'add', path: '/metadata/labels', value: { ...(req.object.metadata.labels ?? {}), second: 'done' } }]));
    await register('Mutating', 'reinvoke-a', [scoped('reinvoke', { name: 'first.plinth.test', url: hooks.url('/first'), reinvocationPolicy: 'IfNeeded' })]);
    await register('Mutating', 'reinvoke-b', [scoped('reinvoke', { name: 'second.plinth.test', url: hooks.url('/second') })]);
    const before = hooks.callsTo('/first').length;
    const res = await api.post('/api/v1/namespaces/reinvoke/configmaps').send({ metadata: { name: 'cm' } }).expect(201);
    assert.equal(res.body.metadata.annotations['first-saw-second'], 'yes');
    assert.equal(res.body.metadata.labels.second, 'done');
    assert.equal(hooks.callsTo('/first').length - before, 2);
  });

  it('calls webhooks with dryRun: true for sideEffects None/NoneOnDryRun and persists nothing', async () => {
    await namespace('dry');
    hooks.on('/dry', () => patch([{ op: 'add', path: '/data', value: { added: 'yes' } }]));
    await register('Mutating', 'dry', [scoped('dry', { name: 'dry.plinth.test', url: hooks.url('/dry'), sideEffects: 'NoneOnDryRun' })]);
    const res = await api.post('/api/v1/namespaces/dry/configmaps?dryRun=All').send({ metadata: { name: 'cm' } }).expect(201);
    assert.deepEqual(res.body.data, { added: 'yes' });
    assert.equal(hooks.callsTo('/dry').at(-1)!.request.dryRun, true);
    assert.deepEqual(hooks.callsTo('/dry').at(-1)!.request.options.dryRun, ['All']);
    await api.get('/api/v1/namespaces/dry/configmaps/cm').expect(404);
  });

  it('uses a denial status code from response.status.code and the "without explanation" text', async () => {
    await namespace('codes');
    hooks.on('/codes', (req) => {
      if (req.name === 'teapot') return deny('short and stout', 418);
      if (req.name === 'boom') return deny('exploded', 500);
      return { response: { allowed: false } };
    });
    await register('Validating', 'codes', [scoped('codes', { name: 'codes.plinth.test', url: hooks.url('/codes') })]);
    const teapot = await api.post('/api/v1/namespaces/codes/configmaps').send({ metadata: { name: 'teapot' } }).expect(418);
    assert.equal(teapot.body.reason, 'Forbidden');
    const boom = await api.post('/api/v1/namespaces/codes/configmaps').send({ metadata: { name: 'boom' } }).expect(500);
    assert.equal(boom.body.reason, 'InternalError');
    assert.equal(boom.body.message, 'Internal error occurred: admission webhook "codes.plinth.test" denied the request: exploded');
    // Validating webhooks run after the name is generated.
    const plain = await api.post('/api/v1/namespaces/codes/configmaps').send({ metadata: { generateName: 'x-' } }).expect(403);
    assert.match(plain.body.message, /^configmaps "x-[a-z0-9]{5}" is forbidden: admission webhook "codes.plinth.test" denied the request without explanation$/);
    // Mutating webhooks run before: the request has no name yet, and the message says "Unknown".
    hooks.on('/codes-m', (req) => (req.name ? allow() : { response: { allowed: false, status: { reason: 'NoName' } } }));
    await register('Mutating', 'codes', [scoped('codes', { name: 'codes-m.plinth.test', url: hooks.url('/codes-m') })]);
    const unnamed = await api.post('/api/v1/namespaces/codes/configmaps').send({ metadata: { generateName: 'y-' } }).expect(403);
    assert.equal(unnamed.body.message, 'configmaps "Unknown" is forbidden: admission webhook "codes-m.plinth.test" denied the request: NoName');
    assert.equal(unnamed.body.reason, 'NoName');
    assert.equal(hooks.callsTo('/codes-m').at(-1)!.request.name, undefined);
  });

  it('matches namespaceSelector on a Namespace object itself and objectSelector on the old or the new object', async () => {
    hooks.on('/ns-self', (req) => deny(`namespace ${req.name} refused`));
    await register('Validating', 'ns-self', [
      { name: 'ns-self.plinth.test', url: hooks.url('/ns-self'), caBundle: certs.caBundle, resources: ['namespaces'], namespaceSelector: { matchLabels: { refuse: 'me' } } },
    ]);
    const res = await api.post('/api/v1/namespaces').send({ metadata: { name: 'refused', labels: { refuse: 'me' } } }).expect(403);
    assert.equal(res.body.message, 'namespaces "refused" is forbidden: admission webhook "ns-self.plinth.test" denied the request: namespace refused refused');
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'accepted' } }).expect(201);

    await namespace('objsel');
    hooks.on('/objsel', () => deny('selected'));
    await register('Validating', 'objsel', [
      scoped('objsel', { name: 'objsel.plinth.test', url: hooks.url('/objsel'), operations: ['UPDATE'], objectSelector: { matchLabels: { pick: 'me' } } }),
    ]);
    await api.post('/api/v1/namespaces/objsel/configmaps').send({ metadata: { name: 'plain' } }).expect(201);
    await api.post('/api/v1/namespaces/objsel/configmaps').send({ metadata: { name: 'picked', labels: { pick: 'me' } } }).expect(201);
    await api.put('/api/v1/namespaces/objsel/configmaps/plain').send({ metadata: { name: 'plain' }, data: { a: 'b' } }).expect(200);
    // Removing the label is still judged: the old object matches.
    await api.put('/api/v1/namespaces/objsel/configmaps/picked').send({ metadata: { name: 'picked' } }).expect(403);
    // Adding it is judged too: the new object matches.
    await api.put('/api/v1/namespaces/objsel/configmaps/plain').send({ metadata: { name: 'plain', labels: { pick: 'me' } } }).expect(403);
  });

  it('speaks admission.k8s.io/v1beta1 to a webhook that accepts only v1beta1', async () => {
    await namespace('beta');
    hooks.on('/beta', () => ({ response: { allowed: true, patch: Buffer.from(JSON.stringify([{ op: 'add', path: '/data', value: { beta: 'yes' } }])).toString('base64') } }));
    await register('Mutating', 'beta', [scoped('beta', { name: 'beta.plinth.test', url: hooks.url('/beta'), admissionReviewVersions: ['v1beta1'] })]);
    const res = await api.post('/api/v1/namespaces/beta/configmaps').send({ metadata: { name: 'cm' } }).expect(201);
    assert.deepEqual(res.body.data, { beta: 'yes' });
    assert.equal(hooks.callsTo('/beta').at(-1)!.apiVersion, 'admission.k8s.io/v1beta1');
  });

  it('resolves a service reference through PLINTH_WEBHOOK_SERVICE_MAP, verifying TLS for name.namespace.svc', async () => {
    await namespace('svc');
    hooks.on('/base/validate', () => deny('via service'));
    await register('Validating', 'svc', [
      scoped('svc', { name: 'svc.plinth.test', service: { namespace: 'plinth-test', name: 'webhook', port: 8443, path: '/validate' } }),
      scoped('svc', { name: 'svc-unmapped.plinth.test', service: { namespace: 'plinth-test', name: 'nowhere' }, failurePolicy: 'Ignore' }),
    ]);
    const res = await api.post('/api/v1/namespaces/svc/configmaps').send({ metadata: { name: 'cm' } }).expect(403);
    assert.match(res.body.message, /denied the request: via service$/);
  });

  it('applies a tenant\'s webhook configurations only to that tenant', async () => {
    const acme = request(`${s.url}/clusters/acme`);
    await acme.post('/api/v1/namespaces').send({ metadata: { name: 'shared' } }).expect(201);
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'shared' } }).expect(201);
    hooks.on('/tenant', (req) => deny(`acme says no to ${req.name}`));
    await acme
      .post(VWC)
      .send(webhookConfiguration('Validating', 'acme-only', [{ name: 'acme.plinth.test', url: hooks.url('/tenant'), caBundle: certs.caBundle }]))
      .expect(201);
    await settle();
    const denied = await acme.post('/api/v1/namespaces/shared/configmaps').send({ metadata: { name: 'cm' } }).expect(403);
    assert.match(denied.body.message, /acme says no to cm/);
    await api.post('/api/v1/namespaces/shared/configmaps').send({ metadata: { name: 'cm' } }).expect(201);
    const list = await api.get(VWC).expect(200);
    assert.ok(!list.body.items.some((i: { metadata: { name: string } }) => i.metadata.name === 'acme-only'));
  });

  it('exports per-webhook metrics: calls, rejections, failures, latency', async () => {
    const text = (await api.get('/metrics').expect(200)).text;
    assert.match(text, /plinth_admission_webhook_requests_total\{tenant="default",name="deny-unwanted-configmap-data.k8s.io",type="validating",operation="CREATE",code="200",rejected="true"\} \d+/);
    assert.match(text, /plinth_admission_webhook_rejections_total\{tenant="default",name="deny-unwanted-configmap-data.k8s.io",type="validating",operation="CREATE",error_type="no_error"\} \d+/);
    assert.match(text, /plinth_admission_webhook_failures_total\{tenant="default",name="svc-unmapped.plinth.test",type="validating",operation="CREATE",reason="config",fail_open="true"\} [1-9]\d*/);
    assert.match(text, /plinth_admission_webhook_duration_seconds_bucket\{le="0.005",tenant="default",name="adding-configmap-data-stage1.k8s.io",type="admit"/);
  });
});
