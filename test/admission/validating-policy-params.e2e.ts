import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { installCrd, widgetCrd } from '../crd/crd-fixtures.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { configMap, coreRule, ensureNamespace, VAP, VAPB, validatingBinding, validatingPolicy } from './support/policies.js';
import { eventually } from '../support/eventually.js';

const CM = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

describe('ValidatingAdmissionPolicy: params, selectors, variables, namespaceObject', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;

  before(async () => {
    s = await startTestServer('vap-params');
    api = request(s.url);
    await ensureNamespace(api, 'params');
    await ensureNamespace(api, 'prod', { env: 'prod' });
    await ensureNamespace(api, 'dev', { env: 'dev' });
  });
  after(async () => {
    await s?.close();
  });

  it('reads params from a ConfigMap named by the binding (and denies per parameterNotFoundAction when it is missing)', async () => {
    await api
      .post(VAP)
      .send(
        validatingPolicy('max-data', {
          paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
          matchConstraints: { resourceRules: [coreRule(['configmaps'])] },
          matchConditions: [{ name: 'not-the-params', expression: "!object.metadata.name.startsWith('limits')" }],
          variables: [{ name: 'count', expression: 'has(object.data) ? object.data.size() : 0' }],
          validations: [{ expression: 'variables.count <= int(params.data.max)', messageExpression: "'too many keys: ' + string(variables.count) + ' > ' + params.data.max" }],
        }),
      )
      .expect(201);
    await api
      .post(VAPB)
      .send(validatingBinding('max-data', 'max-data', { paramRef: { name: 'limits', namespace: 'params', parameterNotFoundAction: 'Deny' }, matchResources: { namespaceSelector: { matchLabels: { env: 'prod' } } } }))
      .expect(201);
    const missing = await eventually(async () => {
      const r = await api.post(CM('prod')).send(configMap('prod', 'a', { x: '1' }));
      assert.equal(r.status, 422, JSON.stringify(r.body));
      return r;
    });
    assert.equal(
      missing.body.message,
      "configmaps \"a\" is forbidden: ValidatingAdmissionPolicy 'max-data' with binding 'max-data' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
    );
    await api.post(CM('params')).send(configMap('params', 'limits', { max: '2' })).expect(201);
    await api.post(CM('prod')).send(configMap('prod', 'a', { x: '1' })).expect(201);
    const tooMany = await api.post(CM('prod')).send(configMap('prod', 'b', { x: '1', y: '2', z: '3' })).expect(422);
    assert.match(tooMany.body.message, /denied request: too many keys: 3 > 2$/);
    // The namespaceSelector of the binding leaves other namespaces alone.
    await api.post(CM('dev')).send(configMap('dev', 'b', { x: '1', y: '2', z: '3' })).expect(201);
    // A param change takes effect for the next request.
    await api.patch(`${CM('params')}/limits`).set('Content-Type', 'application/merge-patch+json').send({ data: { max: '5' } }).expect(200);
    await api.post(CM('prod')).send(configMap('prod', 'b', { x: '1', y: '2', z: '3' })).expect(201);
  });

  it('evaluates once per param selected by label, and Allow admits when none is found', async () => {
    await api
      .post(VAP)
      .send(
        validatingPolicy('banned-words', {
          paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
          matchConstraints: { resourceRules: [coreRule(['configmaps'])], objectSelector: { matchLabels: { checked: 'yes' } } },
          validations: [{ expression: '!has(object.data) || !(params.data.word in object.data)', messageExpression: "'key ' + params.data.word + ' is banned'" }],
        }),
      )
      .expect(201);
    await api
      .post(VAPB)
      .send(validatingBinding('banned-words', 'banned-words', { paramRef: { selector: { matchLabels: { kind: 'banned' } }, parameterNotFoundAction: 'Allow' } }))
      .expect(201);
    await ensureNamespace(api, 'words');
    await api.post(CM('words')).send(configMap('words', 'x', { foo: '1' }, { checked: 'yes' })).expect(201);
    await api.post(CM('words')).send(configMap('words', 'ban-foo', { word: 'foo' }, { kind: 'banned' })).expect(201);
    await api.post(CM('words')).send(configMap('words', 'ban-bar', { word: 'bar' }, { kind: 'banned' })).expect(201);
    const denied = await eventually(async () => {
      const r = await api.post(CM('words')).send(configMap('words', 'y', { bar: '1' }, { checked: 'yes' }));
      assert.equal(r.status, 422);
      return r;
    });
    assert.match(denied.body.message, /key bar is banned$/);
    // Unlabelled objects are not selected by the policy's objectSelector.
    await api.post(CM('words')).send(configMap('words', 'z', { bar: '1' })).expect(201);
  });

  it('reads params from custom resources and exposes namespaceObject', async () => {
    await installCrd(api, widgetCrd({ group: 'policy.example.com', plural: 'limits', kind: 'Limit', scope: 'Cluster', schema: {
      type: 'object', properties: { spec: { type: 'object', properties: { maxKeys: { type: 'integer' }, requiredLabel: { type: 'string' } } } },
    } }));
    await api.post('/apis/policy.example.com/v1/limits').send({ apiVersion: 'policy.example.com/v1', kind: 'Limit', metadata: { name: 'default' }, spec: { maxKeys: 1, requiredLabel: 'env' } }).expect(201);
    await api
      .post(VAP)
      .send(
        validatingPolicy('cr-params', {
          paramKind: { apiVersion: 'policy.example.com/v1', kind: 'Limit' },
          matchConstraints: { resourceRules: [coreRule(['configmaps'])], namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'Exists' }] } },
          validations: [
            { expression: '!has(object.data) || object.data.size() <= params.spec.maxKeys', message: 'too many keys for a labelled namespace' },
            { expression: "namespaceObject.metadata.labels[params.spec.requiredLabel] != 'dev' || object.metadata.name.startsWith('dev-')", messageExpression: "'in ' + namespaceObject.metadata.name + ' names start with dev-'" },
          ],
        }),
      )
      .expect(201);
    await api.post(VAPB).send(validatingBinding('cr-params', 'cr-params', { paramRef: { name: 'default', parameterNotFoundAction: 'Deny' } })).expect(201);
    const res = await eventually(async () => {
      const r = await api.post(CM('dev')).send(configMap('dev', 'c', { a: '1' }));
      assert.equal(r.status, 422, JSON.stringify(r.body));
      return r;
    });
    assert.match(res.body.message, /ValidatingAdmissionPolicy 'cr-params' with binding 'cr-params' denied request: in dev names start with dev-$/);
    await api.post(CM('dev')).send(configMap('dev', 'dev-c', { a: '1' })).expect(201);
    await api.post(CM('dev')).send(configMap('dev', 'dev-d', { a: '1', b: '2' })).expect(422);
    // The params namespace has no env label: not matched.
    await api.post(CM('params')).send(configMap('params', 'many', { a: '1', b: '2' })).expect(201);
  });

  it('validates custom resources too', async () => {
    await api
      .post(VAP)
      .send(
        validatingPolicy('limit-bounds', {
          matchConstraints: { resourceRules: [{ apiGroups: ['policy.example.com'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['limits'] }] },
          validations: [{ expression: 'object.spec.maxKeys <= 10', messageExpression: "'maxKeys ' + string(object.spec.maxKeys) + ' is above 10'", reason: 'Forbidden' }],
        }),
      )
      .expect(201);
    await api.post(VAPB).send(validatingBinding('limit-bounds', 'limit-bounds')).expect(201);
    const res = await eventually(async () => {
      const r = await api.post('/apis/policy.example.com/v1/limits').send({ apiVersion: 'policy.example.com/v1', kind: 'Limit', metadata: { name: 'huge' }, spec: { maxKeys: 20 } });
      assert.equal(r.status, 403, JSON.stringify(r.body));
      return r;
    });
    assert.equal(res.body.message, "limits.policy.example.com \"huge\" is forbidden: ValidatingAdmissionPolicy 'limit-bounds' with binding 'limit-bounds' denied request: maxKeys 20 is above 10");
    assert.deepEqual(res.body.details, { name: 'huge', group: 'policy.example.com', kind: 'limits', causes: [{ message: "ValidatingAdmissionPolicy 'limit-bounds' with binding 'limit-bounds' denied request: maxKeys 20 is above 10" }] });
    await api.post('/apis/policy.example.com/v1/limits').send({ apiVersion: 'policy.example.com/v1', kind: 'Limit', metadata: { name: 'small' }, spec: { maxKeys: 2 } }).expect(201);
  });

  it('a binding naming a missing param kind fails closed with the configuration error', async () => {
    await api
      .post(VAP)
      .send(validatingPolicy('unknown-kind', { paramKind: { apiVersion: 'nothing.example.com/v1', kind: 'Nothing' }, matchConstraints: { resourceRules: [coreRule(['secrets'])] }, validations: [{ expression: 'true' }] }))
      .expect(201);
    await api.post(VAPB).send(validatingBinding('unknown-kind', 'unknown-kind', { paramRef: { name: 'x', parameterNotFoundAction: 'Allow' } })).expect(201);
    const res = await eventually(async () => {
      const r = await api.post('/api/v1/namespaces/params/secrets').send({ metadata: { name: 's' } });
      assert.equal(r.status, 422);
      return r;
    });
    assert.match(res.body.message, /failed to configure binding: paramKind kind `&ParamKind\{APIVersion:nothing.example.com\/v1,Kind:Nothing,\}` not known$/);
  });
});

describe('ValidatingAdmissionPolicy: failure policies on runtime errors and cost exhaustion', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;

  before(async () => {
    s = await startTestServer('vap-failures');
    api = request(s.url);
    await ensureNamespace(api, 'fail');
  });
  after(async () => {
    await s?.close();
  });

  async function policyWithBinding(name: string, failurePolicy: string, expression: string, resources: string[]): Promise<void> {
    await api.post(VAP).send(validatingPolicy(name, { failurePolicy, matchConstraints: { resourceRules: [coreRule(resources)] }, validations: [{ expression }] })).expect(201);
    await api.post(VAPB).send(validatingBinding(name, name)).expect(201);
  }

  it('denies on a runtime error under Fail and admits under Ignore', async () => {
    await policyWithBinding('missing-key', 'Fail', "object.data.missing == 'x'", ['configmaps']);
    const res = await eventually(async () => {
      const r = await api.post(CM('fail')).send(configMap('fail', 'a', { b: '1' }));
      assert.equal(r.status, 422);
      return r;
    });
    assert.match(res.body.message, /^configmaps "a" is forbidden: ValidatingAdmissionPolicy 'missing-key' with binding 'missing-key' denied request: expression 'object.data.missing == 'x'' resulted in error: no such key: missing/);
    await api.patch(`${VAP}/missing-key`).set('Content-Type', 'application/merge-patch+json').send({ spec: { failurePolicy: 'Ignore' } }).expect(200);
    await eventually(async () => {
      const r = await api.post(CM('fail')).send(configMap('fail', 'a', { b: '1' }));
      assert.equal(r.status, 201, JSON.stringify(r.body));
    });
  });

  it('fails an expression that exhausts the cost limit, per failure policy', async () => {
    const expensive = '[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, a + b + c + d + e + f > 0))))))';
    await policyWithBinding('expensive', 'Fail', expensive, ['secrets']);
    const res = await eventually(async () => {
      const r = await api.post('/api/v1/namespaces/fail/secrets').send({ metadata: { name: 's1' } });
      assert.equal(r.status, 422, JSON.stringify(r.body));
      return r;
    });
    assert.match(res.body.message, /ValidatingAdmissionPolicy 'expensive' with binding 'expensive' denied request: expression '.*' resulted in error: operation cancelled: actual cost limit exceeded$/);
    await api.patch(`${VAP}/expensive`).set('Content-Type', 'application/merge-patch+json').send({ spec: { failurePolicy: 'Ignore' } }).expect(200);
    await eventually(async () => {
      const r = await api.post('/api/v1/namespaces/fail/secrets').send({ metadata: { name: 's1' } });
      assert.equal(r.status, 201, JSON.stringify(r.body));
    });
  });

  it('counts evaluations per policy and binding in /metrics', async () => {
    const metrics = await api.get('/metrics').expect(200);
    assert.match(metrics.text, /plinth_admission_policy_check_total\{tenant="default",type="validating",policy="missing-key",policy_binding="missing-key",enforcement_action="deny",error_type="invalid_error"\} [1-9]/);
    assert.match(metrics.text, /plinth_admission_policy_check_total\{tenant="default",type="validating",policy="expensive",policy_binding="expensive",enforcement_action="deny",error_type="[a-z_]+"\} [1-9]/);
  });
});
