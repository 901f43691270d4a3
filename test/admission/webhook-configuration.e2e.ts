import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { allow, deny, makeCertificates, type TestCertificates, TestWebhookServer, webhookConfiguration } from './support/webhook-server.js';
import { eventually } from '../support/eventually.js';

const GV = '/apis/admissionregistration.k8s.io/v1';
const MWC = `${GV}/mutatingwebhookconfigurations`;
const VWC = `${GV}/validatingwebhookconfigurations`;

describe('MutatingWebhookConfiguration and ValidatingWebhookConfiguration resources', () => {
  let certs: TestCertificates;
  let hooks: TestWebhookServer;
  let s: TestServer;
  let api: ReturnType<typeof request>;

  before(async () => {
    certs = await makeCertificates();
    hooks = await TestWebhookServer.start(certs);
    s = await startTestServer('webhook-config', { PLINTH_WEBHOOK_TRUSTED_TENANTS: 'default', PLINTH_WEBHOOK_REFRESH_MS: '100' });
    api = request(s.url);
  });
  after(async () => {
    await s?.close();
    await hooks?.close();
  });

  /** 422 body of creating `body` at `path`. */
  async function invalid(path: string, body: Record<string, unknown>): Promise<{ message: string; causes: Array<{ field: string; message: string }> }> {
    const res = await api.post(path).send(body).expect(422);
    return { message: res.body.message, causes: res.body.details.causes };
  }

  it('is discoverable: admissionregistration.k8s.io/v1 lists both resources', async () => {
    const groups = await api.get('/apis').expect(200);
    const group = groups.body.groups.find((g: { name: string }) => g.name === 'admissionregistration.k8s.io');
    assert.ok(group, 'group listed in /apis');
    assert.deepEqual(group.preferredVersion, { groupVersion: 'admissionregistration.k8s.io/v1', version: 'v1' });
    await api.get('/apis/admissionregistration.k8s.io').expect(200);
    const list = await api.get(GV).expect(200);
    const names = list.body.resources.map((r: { name: string }) => r.name).sort();
    assert.deepEqual(names, ['mutatingwebhookconfigurations', 'validatingadmissionpolicies', 'validatingadmissionpolicies/status', 'validatingadmissionpolicybindings', 'validatingwebhookconfigurations']);
    for (const r of list.body.resources.filter((x: { name: string }) => !x.name.includes('/'))) {
      assert.equal(r.namespaced, false);
      assert.ok(r.verbs.includes('deletecollection') && r.verbs.includes('watch') && r.verbs.includes('patch'));
      assert.deepEqual(r.categories, ['api-extensions']);
    }
  });

  it('applies the v1 defaults on create and sets generation', async () => {
    const body = webhookConfiguration('Mutating', 'defaults', [{ name: 'defaults.plinth.test', service: { namespace: 'ns', name: 'svc' }, resources: ['nothing'] }]);
    const res = await api.post(MWC).send(body).expect(201);
    const hook = res.body.webhooks[0];
    assert.equal(hook.failurePolicy, 'Fail');
    assert.equal(hook.matchPolicy, 'Equivalent');
    assert.equal(hook.reinvocationPolicy, 'Never');
    assert.equal(hook.timeoutSeconds, 10);
    assert.deepEqual(hook.namespaceSelector, {});
    assert.deepEqual(hook.objectSelector, {});
    assert.equal(hook.rules[0].scope, '*');
    assert.equal(hook.clientConfig.service.port, 443);
    assert.equal(res.body.metadata.generation, 1);
    const vres = await api.post(VWC).send(webhookConfiguration('Validating', 'defaults', [{ name: 'defaults.plinth.test', url: 'https://example.com/x', resources: ['nothing'] }])).expect(201);
    assert.equal(vres.body.webhooks[0].reinvocationPolicy, undefined);
    assert.equal(vres.body.webhooks[0].failurePolicy, 'Fail');
  });

  it('validates as upstream', async () => {
    const base = { name: 'v.plinth.test', url: 'https://example.com/' };
    const one = (extra: Record<string, unknown>) => webhookConfiguration('Validating', 'bad', [{ ...base, ...extra }]);
    let r = await invalid(VWC, one({ sideEffects: undefined }));
    assert.match(r.message, /webhooks\[0\]\.sideEffects: Required value: must specify one of None, NoneOnDryRun/);
    r = await invalid(VWC, one({ sideEffects: 'Some' }));
    assert.match(r.message, /webhooks\[0\]\.sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"/);
    r = await invalid(VWC, one({ admissionReviewVersions: undefined }));
    assert.match(r.message, /webhooks\[0\]\.admissionReviewVersions: Required value: must specify one of v1, v1beta1/);
    r = await invalid(VWC, one({ admissionReviewVersions: ['v2'] }));
    assert.match(r.message, /webhooks\[0\]\.admissionReviewVersions: Invalid value: .*must include at least one of v1, v1beta1/);
    r = await invalid(VWC, webhookConfiguration('Validating', 'bad', [{ ...base, service: { namespace: 'a', name: 'b' } }]));
    assert.match(r.message, /webhooks\[0\]\.clientConfig: Required value: exactly one of url or service is required/);
    r = await invalid(VWC, webhookConfiguration('Validating', 'bad', [{ name: 'v.plinth.test' }]));
    assert.match(r.message, /exactly one of url or service is required/);
    r = await invalid(VWC, one({ url: 'http://example.com/' }));
    assert.match(r.message, /webhooks\[0\]\.clientConfig\.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https:\/\/host\[\/path\]/);
    r = await invalid(VWC, one({ url: 'https://user:pw@example.com/?a=b#frag' }));
    assert.match(r.message, /user information is not permitted in the URL/);
    assert.match(r.message, /Invalid value: "frag": fragments are not permitted in the URL/);
    assert.match(r.message, /Invalid value: "a=b": query parameters are not permitted in the URL/);
    r = await invalid(VWC, one({ timeoutSeconds: 31 }));
    assert.match(r.message, /webhooks\[0\]\.timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds/);
    r = await invalid(VWC, one({ timeoutSeconds: 0 }));
    assert.match(r.message, /the timeout value must be between 1 and 30 seconds/);
    r = await invalid(VWC, one({ failurePolicy: 'Maybe', matchPolicy: 'Loose' }));
    assert.match(r.message, /failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"/);
    assert.match(r.message, /matchPolicy: Unsupported value: "Loose": supported values: "Equivalent", "Exact"/);
    r = await invalid(MWC, webhookConfiguration('Mutating', 'bad', [{ ...base, reinvocationPolicy: 'Always' }]));
    assert.match(r.message, /reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"/);
    r = await invalid(VWC, webhookConfiguration('Validating', 'bad', [base, base]));
    assert.match(r.message, /webhooks\[1\]\.name: Duplicate value: "v.plinth.test"/);
    r = await invalid(VWC, one({ name: 'short' }));
    assert.match(r.message, /webhooks\[0\]\.name: Invalid value: "short": should be a domain with at least three segments separated by dots/);
    r = await invalid(VWC, one({ operations: ['CREATE', '*'], resources: ['*', 'pods'] }));
    assert.match(r.message, /rules\[0\]\.operations: Invalid value: .*if '\*' is present, must not specify other operations/);
    assert.match(r.message, /rules\[0\]\.resources: Invalid value: .*if '\*' is present, must not specify other resources without subresources/);
    r = await invalid(VWC, one({ namespaceSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] } }));
    assert.match(r.message, /namespaceSelector\.matchExpressions\[0\]\.values: Required value: must be specified when `operator` is 'In' or 'NotIn'/);
    r = await invalid(VWC, one({ matchConditions: [{ name: 'bad', expression: '... [] bad expression' }] }));
    assert.match(r.message, /webhooks\[0\]\.matchConditions\[0\]\.expression: Invalid value: "\.\.\. \[\] bad expression": compilation failed: ERROR: <input>:1:1/);
    r = await invalid(VWC, one({ matchConditions: [{ name: 'int', expression: '1 + 1' }] }));
    assert.match(r.message, /must evaluate to bool but got int/);
    const many = Array.from({ length: 65 }, (_, i) => ({ name: `c${i}`, expression: 'true' }));
    r = await invalid(VWC, one({ matchConditions: many }));
    assert.match(r.message, /webhooks\[0\]\.matchConditions: Too many: 65: must have at most 64 items/);
  });

  it('renders as a Table with NAME, WEBHOOKS, AGE', async () => {
    const res = await api.get(MWC).set('Accept', 'application/json;as=Table;v=v1;g=meta.k8s.io').expect(200);
    assert.deepEqual(
      res.body.columnDefinitions.map((c: { name: string; type: string }) => [c.name, c.type]),
      [
        ['Name', 'string'],
        ['Webhooks', 'integer'],
        ['Age', 'string'],
      ],
    );
    const row = res.body.rows.find((r: { cells: unknown[] }) => r.cells[0] === 'defaults');
    assert.equal(row.cells[1], 1);
  });

  it('never sends webhook configuration objects to webhooks', async () => {
    hooks.on('/deny-all', () => deny('nothing gets through'));
    const catchAll = { url: hooks.url('/deny-all'), caBundle: certs.caBundle, operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'] };
    await api.post(VWC).send(webhookConfiguration('Validating', 'deny-all', [{ name: 'deny-all.plinth.test', ...catchAll }])).expect(201);
    await api.post(MWC).send(webhookConfiguration('Mutating', 'deny-all', [{ name: 'deny-all.plinth.test', ...catchAll }])).expect(201);
    await eventually(async () => {
      const res = await api.post('/api/v1/namespaces').send({ metadata: { name: 'probe-exempt' } });
      assert.equal(res.status, 403);
    }, { timeoutMs: 5000 });
    const body = webhookConfiguration('Validating', 'exempt-probe', [{ name: 'probe.plinth.test', url: 'https://example.com/', resources: ['nothing'] }]);
    await api.post(VWC).send(body).expect(201);
    await api
      .patch(`${VWC}/exempt-probe`)
      .set('Content-Type', 'application/merge-patch+json')
      .send(JSON.stringify({ metadata: { labels: { patched: 'yes' } } }))
      .expect(200);
    await api.delete(`${VWC}/exempt-probe`).expect(200);
    await api.delete(`${MWC}/deny-all`).expect(200);
    await api.delete(`${VWC}/deny-all`).expect(200);
    await eventually(async () => {
      await api.post('/api/v1/namespaces').send({ metadata: { name: 'probe-exempt' } }).expect(201);
    }, { timeoutMs: 5000 });
    assert.ok(!hooks.callsTo('/deny-all').some((c) => c.request.resource.group === 'admissionregistration.k8s.io'));
  });

  it('PUT and JSON patch of rules[0].operations switch the webhook off and on', async () => {
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'toggle' } }).expect(201);
    hooks.on('/toggle', () => deny('toggle says no'));
    const body = webhookConfiguration('Validating', 'toggle', [
      { name: 'toggle.plinth.test', url: hooks.url('/toggle'), caBundle: certs.caBundle, namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'toggle' } } },
    ]);
    // Plinth does not label namespaces automatically: select by a label set here.
    await api.patch('/api/v1/namespaces/toggle').set('Content-Type', 'application/merge-patch+json').send(JSON.stringify({ metadata: { labels: { 'kubernetes.io/metadata.name': 'toggle' } } })).expect(200);
    const created = await api.post(VWC).send(body).expect(201);
    let n = 0;
    const probe = () => api.post('/api/v1/namespaces/toggle/configmaps').send({ metadata: { name: `p${n++}` } });
    await eventually(async () => assert.equal((await probe()).status, 403), { timeoutMs: 5000 });
    const updated = structuredClone(created.body);
    updated.webhooks[0].rules[0].operations = ['UPDATE'];
    const put = await api.put(`${VWC}/toggle`).send(updated).expect(200);
    assert.equal(put.body.metadata.generation, 2);
    await eventually(async () => assert.equal((await probe()).status, 201), { timeoutMs: 5000 });
    await api
      .patch(`${VWC}/toggle`)
      .set('Content-Type', 'application/json-patch+json')
      .send(JSON.stringify([{ op: 'replace', path: '/webhooks/0/rules/0/operations', value: ['CREATE'] }]))
      .expect(200);
    await eventually(async () => assert.equal((await probe()).status, 403), { timeoutMs: 5000 });
    await api.delete(`${VWC}/toggle`).expect(200);
  });

  it('lists by label selector and deletes the collection, which disables the webhooks', async () => {
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'listing', labels: { listing: 'yes' } } }).expect(201);
    hooks.on('/listing', () => deny('listed webhook says no'));
    const uuid = 'u-42';
    for (let i = 0; i < 10; i++) {
      const body = webhookConfiguration(
        'Validating',
        `list-${i}`,
        [{ name: `list-${i}.plinth.test`, url: hooks.url('/listing'), caBundle: certs.caBundle, namespaceSelector: { matchLabels: { listing: 'yes' } } }],
        { 'e2e-list-test-uuid': uuid },
      );
      await api.post(VWC).send(body).expect(201);
    }
    const list = await api.get(`${VWC}?labelSelector=e2e-list-test-uuid=${uuid}`).expect(200);
    assert.equal(list.body.items.length, 10);
    assert.equal(list.body.kind, 'ValidatingWebhookConfigurationList');
    const watched = await api
      .get(`${VWC}?watch=1&timeoutSeconds=1&labelSelector=e2e-list-test-uuid=${uuid}`)
      .buffer(true)
      .parse((res, cb) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => cb(null, text));
      })
      .expect(200);
    const events = String(watched.body).trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(events.filter((e) => e.type === 'ADDED' && e.object.kind === 'ValidatingWebhookConfiguration').length, 10);
    await eventually(async () => assert.equal((await api.post('/api/v1/namespaces/listing/configmaps').send({ metadata: { generateName: 'l-' } })).status, 403), { timeoutMs: 5000 });
    await api.delete(`${VWC}?labelSelector=e2e-list-test-uuid=${uuid}`).expect(200);
    assert.equal((await api.get(`${VWC}?labelSelector=e2e-list-test-uuid=${uuid}`).expect(200)).body.items.length, 0);
    await eventually(async () => assert.equal((await api.post('/api/v1/namespaces/listing/configmaps').send({ metadata: { generateName: 'l-' } })).status, 201), { timeoutMs: 5000 });
  });

  it('stores matchConditions unchanged and skips requests a condition rules out', async () => {
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'conditions', labels: { cond: 'yes' } } }).expect(201);
    hooks.on('/conditions', (req) => deny(`conditions let ${req.name} through`));
    const matchConditions = [{ name: 'skip-me-not', expression: "object.metadata.name != 'skip-me'" }];
    const body = webhookConfiguration('Validating', 'conditions', [
      { name: 'conditions.plinth.test', url: hooks.url('/conditions'), caBundle: certs.caBundle, matchConditions, namespaceSelector: { matchLabels: { cond: 'yes' } } },
    ]);
    const created = await api.post(VWC).send(body).expect(201);
    assert.deepEqual(created.body.webhooks[0].matchConditions, matchConditions);
    const again = structuredClone(created.body);
    again.metadata.labels = { touched: 'yes' };
    const put = await api.put(`${VWC}/conditions`).send(again).expect(200);
    assert.deepEqual(put.body.webhooks[0].matchConditions, matchConditions);
    await eventually(async () => assert.equal((await api.post('/api/v1/namespaces/conditions/configmaps').send({ metadata: { name: 'other' } })).status, 403), { timeoutMs: 5000 });
    await api.post('/api/v1/namespaces/conditions/configmaps').send({ metadata: { name: 'skip-me' } }).expect(201);
  });

  it('an erroring matchCondition rejects under failurePolicy Fail (403) and skips under Ignore', async () => {
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'cond-err', labels: { conderr: 'yes' } } }).expect(201);
    hooks.on('/cond-err', () => allow());
    const hook = (failurePolicy: string) => ({
      name: `cond-err-${failurePolicy.toLowerCase()}.plinth.test`,
      url: hooks.url('/cond-err'),
      caBundle: certs.caBundle,
      failurePolicy,
      namespaceSelector: { matchLabels: { conderr: 'yes' } },
      objectSelector: { matchLabels: { policy: failurePolicy } },
      matchConditions: [{ name: 'missing-key', expression: "object.data['absent'] == 'x'" }],
    });
    await api.post(VWC).send(webhookConfiguration('Validating', 'cond-err', [hook('Fail'), hook('Ignore')])).expect(201);
    await eventually(async () => {
      const res = await api.post('/api/v1/namespaces/cond-err/configmaps').send({ metadata: { generateName: 'f-', labels: { policy: 'Fail' } }, data: {} });
      assert.equal(res.status, 403);
      assert.match(res.body.message, /^configmaps "f-[a-z0-9]{5}" is forbidden: expression 'object.data\['absent'\] == 'x'' resulted in error: no such key/);
    }, { timeoutMs: 5000 });
    await api.post('/api/v1/namespaces/cond-err/configmaps').send({ metadata: { name: 'ignored', labels: { policy: 'Ignore' } }, data: {} }).expect(201);
  });
});
