import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { configMap, coreRule, ensureNamespace, MAP, MAPB, VAP, VAPB, validatingBinding, validatingPolicy } from './support/policies.js';
import { eventually } from '../support/eventually.js';

const CM = '/api/v1/namespaces/mut/configmaps';

function mutatingPolicy(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1alpha1',
    kind: 'MutatingAdmissionPolicy',
    metadata: { name },
    spec: { matchConstraints: { resourceRules: [coreRule(['configmaps'])] }, ...spec },
  };
}

function mutatingBinding(name: string, policyName: string, spec: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'admissionregistration.k8s.io/v1alpha1', kind: 'MutatingAdmissionPolicyBinding', metadata: { name }, spec: { policyName, ...spec } };
}

describe('MutatingAdmissionPolicy (v1alpha1): ApplyConfiguration and JSONPatch', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;

  before(async () => {
    // Alpha in 1.32: the gate and the API version are both off by default, as upstream.
    s = await startTestServer('map', { PLINTH_FEATURE_GATES: 'MutatingAdmissionPolicy=true', PLINTH_RUNTIME_CONFIG: 'admissionregistration.k8s.io/v1alpha1=true' });
    api = request(s.url);
    await ensureNamespace(api, 'mut');
  });
  after(async () => {
    await s?.close();
  });

  it('defaults and validates policies (construction syntax compiles; bad patch types are refused)', async () => {
    const bad = await api.post(MAP).send(mutatingPolicy('bad', { mutations: [{ patchType: 'Merge' }, { patchType: 'JSONPatch', jsonPatch: { expression: '[JSONPatch{op: "add", path: ' } }] })).expect(422);
    const fields = bad.body.details.causes.map((c: { field: string }) => c.field);
    assert.ok(fields.includes('spec.mutations[0].patchType'), JSON.stringify(bad.body));
    assert.ok(fields.includes('spec.mutations[1].jsonPatch.expression'));
    const ok = await api
      .post(MAP)
      .send(mutatingPolicy('noop', { mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{}' } }] }))
      .expect(201);
    assert.equal(ok.body.spec.failurePolicy, 'Fail');
    assert.equal(ok.body.spec.reinvocationPolicy, 'Never');
    assert.equal(ok.body.spec.matchConstraints.matchPolicy, 'Equivalent');
  });

  it('refuses DELETE in the operations of a policy and of a binding, as upstream (nothing to mutate on delete)', async () => {
    const unsupported = 'Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE"';
    const noop = [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{}' } }];
    const policy = mutatingPolicy('on-delete', { mutations: noop });
    (policy.spec as { matchConstraints: unknown }).matchConstraints = { resourceRules: [coreRule(['configmaps'], ['CREATE', 'DELETE'])] };
    const bad = await api.post(MAP).send(policy).expect(422);
    assert.deepEqual(bad.body.details.causes, [{ reason: 'FieldValueNotSupported', field: 'spec.matchConstraints.resourceRules.operations', message: unsupported }]);
    const binding = mutatingBinding('on-delete', 'noop', { matchResources: { resourceRules: [coreRule(['configmaps'], ['DELETE'])] } });
    const badBinding = await api.post(MAPB).send(binding).expect(422);
    assert.deepEqual(badBinding.body.details.causes, [{ reason: 'FieldValueNotSupported', field: 'spec.matchResources.resourceRules.operations', message: unsupported }]);
    // CONNECT, CREATE, UPDATE and '*' are allowed.
    (policy.spec as { matchConstraints: unknown }).matchConstraints = { resourceRules: [coreRule(['configmaps'], ['CREATE', 'UPDATE', 'CONNECT']), coreRule(['secrets'], ['*'])] };
    await api.post(MAP).send(policy).expect(201);
    await api.delete(`${MAP}/on-delete`).expect(200);
  });

  it('merges an ApplyConfiguration into the object before validation', async () => {
    await api
      .post(MAP)
      .send(
        mutatingPolicy('add-labels', {
          matchConditions: [{ name: 'not-opted-out', expression: "!has(object.metadata.labels) || !('skip' in object.metadata.labels)" }],
          variables: [{ name: 'owner', expression: "'team-' + object.metadata.name" }],
          mutations: [
            {
              patchType: 'ApplyConfiguration',
              applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"owner": variables.owner, "managed": "true"}}, data: {"injected": "yes"}}' },
            },
          ],
        }),
      )
      .expect(201);
    await api.post(MAPB).send(mutatingBinding('add-labels', 'add-labels')).expect(201);
    const created = await eventually(async () => {
      const r = await api.post(CM).send(configMap('mut', 'web', { a: '1' }, { app: 'web' })).expect(201);
      assert.equal(r.body.metadata.labels.owner, 'team-web', JSON.stringify(r.body));
      return r;
    });
    assert.deepEqual(created.body.metadata.labels, { app: 'web', owner: 'team-web', managed: 'true' });
    assert.deepEqual(created.body.data, { a: '1', injected: 'yes' });
    const skipped = await api.post(CM).send(configMap('mut', 'skipped', { a: '1' }, { skip: 'true' })).expect(201);
    assert.deepEqual(skipped.body.metadata.labels, { skip: 'true' });
  });

  it('applies JSONPatch mutations with params, and validating policies see the mutated object', async () => {
    await api.post(CM).send(configMap('mut', 'defaults', { region: 'eu-1' })).expect(201);
    await api
      .post(MAP)
      .send(
        mutatingPolicy('region', {
          paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
          matchConstraints: { resourceRules: [coreRule(['configmaps'], ['CREATE'])], objectSelector: { matchLabels: { region: 'auto' } } },
          mutations: [
            {
              patchType: 'JSONPatch',
              jsonPatch: { expression: '[JSONPatch{op: "add", path: "/data/region", value: params.data.region}, JSONPatch{op: "remove", path: "/metadata/labels/region"}]' },
            },
          ],
        }),
      )
      .expect(201);
    await api.post(MAPB).send(mutatingBinding('region', 'region', { paramRef: { name: 'defaults', namespace: 'mut', parameterNotFoundAction: 'Deny' } })).expect(201);
    await api
      .post(VAP)
      .send(validatingPolicy('needs-region', { matchConstraints: { resourceRules: [coreRule(['configmaps'], ['CREATE'])] }, validations: [{ expression: "!has(object.metadata.labels) || !('needs-region' in object.metadata.labels) || 'region' in object.data" }] }))
      .expect(201);
    await api.post(VAPB).send(validatingBinding('needs-region', 'needs-region')).expect(201);
    const created = await eventually(async () => {
      const r = await api.post(CM).send(configMap('mut', 'api', {}, { region: 'auto', 'needs-region': 'x', skip: 'y' })).expect(201);
      assert.equal(r.body.data.region, 'eu-1', JSON.stringify(r.body));
      return r;
    });
    assert.equal(created.body.metadata.labels.region, undefined);
    // Without the label the mutation does not apply and the validating policy denies.
    await api.post(CM).send(configMap('mut', 'api2', {}, { 'needs-region': 'x', skip: 'y' })).expect(422);
  });

  it('rejects with 403 and the policy error when a mutation fails under Fail, and ignores it under Ignore', async () => {
    await api
      .post(MAP)
      .send(
        mutatingPolicy('broken', {
          matchConstraints: { resourceRules: [coreRule(['secrets'])] },
          mutations: [{ patchType: 'JSONPatch', jsonPatch: { expression: '[JSONPatch{op: "replace", path: "/data/missing", value: "x"}]' } }],
        }),
      )
      .expect(201);
    await api.post(MAPB).send(mutatingBinding('broken', 'broken')).expect(201);
    const res = await eventually(async () => {
      const r = await api.post('/api/v1/namespaces/mut/secrets').send({ metadata: { name: 's' }, data: { a: 'YQ==' } });
      assert.equal(r.status, 403, JSON.stringify(r.body));
      return r;
    });
    assert.equal(res.body.reason, 'Invalid');
    assert.match(res.body.message, /^policy 'broken' with binding 'broken' denied request: JSON Patch: /);
    await api.patch(`${MAP}/broken`).set('Content-Type', 'application/merge-patch+json').send({ spec: { failurePolicy: 'Ignore' } }).expect(200);
    await eventually(async () => {
      await api.post('/api/v1/namespaces/mut/secrets').send({ metadata: { name: 's' }, data: { a: 'YQ==' } }).expect(201);
    });
  });

  it('reinvokes IfNeeded policies when a later policy changed the object', async () => {
    // "a-suffix" runs first (policies by name) and appends to a label that "b-set" sets afterwards.
    await api
      .post(MAP)
      .send(
        mutatingPolicy('a-suffix', {
          reinvocationPolicy: 'IfNeeded',
          matchConstraints: { resourceRules: [coreRule(['configmaps'], ['CREATE'])], objectSelector: { matchLabels: { reinvoke: 'yes' } } },
          mutations: [
            {
              patchType: 'ApplyConfiguration',
              applyConfiguration: { expression: "has(object.data) && 'stage' in object.data && !object.data.stage.endsWith('-done') ? Object{data: {\"stage\": object.data.stage + '-done'}} : Object{}" },
            },
          ],
        }),
      )
      .expect(201);
    await api.post(MAPB).send(mutatingBinding('a-suffix', 'a-suffix')).expect(201);
    await api
      .post(MAP)
      .send(
        mutatingPolicy('b-set', {
          matchConstraints: { resourceRules: [coreRule(['configmaps'], ['CREATE'])], objectSelector: { matchLabels: { reinvoke: 'yes' } } },
          mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{data: {"stage": "set"}}' } }],
        }),
      )
      .expect(201);
    await api.post(MAPB).send(mutatingBinding('b-set', 'b-set')).expect(201);
    const res = await eventually(async () => {
      const r = await api.post(CM).send(configMap('mut', `re-${Date.now()}`, {}, { reinvoke: 'yes', skip: 'y' })).expect(201);
      assert.equal(r.body.data.stage, 'set-done', JSON.stringify(r.body));
      return r;
    });
    assert.equal(res.body.data.stage, 'set-done');
  });
});
