import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { installCrd, widgetCrd } from '../crd/crd-fixtures.js';
import { configMap, coreRule, ensureNamespace, VAP, VAPB, validatingBinding, validatingPolicy } from './support/policies.js';
import { eventually } from '../support/eventually.js';

describe('ValidatingAdmissionPolicy: deny, warn, audit', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;

  before(async () => {
    s = await startTestServer('vap-basic', { PLINTH_TENANTS: 'other' });
    api = request(s.url);
    await ensureNamespace(api, 'vap');
  });
  after(async () => {
    await s?.close();
  });

  it('applies upstream defaults and lists the kinds in discovery', async () => {
    const res = await api
      .post(VAP)
      .send(validatingPolicy('defaults', { matchConstraints: { resourceRules: [coreRule(['nothing'])] }, validations: [{ expression: 'true' }] }))
      .expect(201);
    assert.equal(res.body.spec.failurePolicy, 'Fail');
    assert.equal(res.body.spec.matchConstraints.matchPolicy, 'Equivalent');
    assert.deepEqual(res.body.spec.matchConstraints.namespaceSelector, {});
    assert.deepEqual(res.body.spec.matchConstraints.objectSelector, {});
    assert.equal(res.body.spec.matchConstraints.resourceRules[0].scope, '*');
    assert.equal(res.body.metadata.generation, 1);
    const v1 = await api.get('/apis/admissionregistration.k8s.io/v1').expect(200);
    const names = v1.body.resources.map((r: { name: string }) => r.name);
    assert.ok(names.includes('validatingadmissionpolicies') && names.includes('validatingadmissionpolicybindings'));
    // MutatingAdmissionPolicy is alpha: not served unless PLINTH_RUNTIME_CONFIG enables its version (mutating-policy.e2e.ts does).
    await api.get('/apis/admissionregistration.k8s.io/v1alpha1').expect(404);
    const group = await api.get('/apis/admissionregistration.k8s.io').expect(200);
    assert.deepEqual(group.body.versions.map((v: { version: string }) => v.version), ['v1']);
  });

  it('rejects invalid policies and bindings with upstream field errors', async () => {
    const bad = await api
      .post(VAP)
      .send(validatingPolicy('bad', { failurePolicy: 'Sometimes', matchConstraints: { resourceRules: [coreRule(['configmaps'])] }, validations: [{ expression: 'object.data.size() <' , reason: 'Teapot' }] }))
      .expect(422);
    const fields = bad.body.details.causes.map((c: { field: string }) => c.field);
    assert.ok(fields.includes('spec.failurePolicy'), JSON.stringify(bad.body));
    assert.ok(fields.includes('spec.validations[0].expression'));
    assert.ok(fields.includes('spec.validations[0].reason'));
    const cause = bad.body.details.causes.find((c: { field: string }) => c.field === 'spec.validations[0].expression');
    assert.match(cause.message, /compilation failed: ERROR: <input>:1:/);
    const noRules = await api.post(VAP).send(validatingPolicy('norules', { matchConstraints: {}, validations: [{ expression: 'true' }] })).expect(422);
    assert.ok(noRules.body.details.causes.some((c: { field: string }) => c.field === 'spec.matchConstraints.resourceRules'));
    const binding = await api.post(VAPB).send(validatingBinding('b', 'p', { validationActions: ['Deny', 'Warn'] })).expect(422);
    assert.match(binding.body.message, /must not contain both Deny and Warn/);
    const noActions = await api.post(VAPB).send({ metadata: { name: 'b2' }, spec: { policyName: 'p' } }).expect(422);
    assert.ok(noActions.body.details.causes.some((c: { field: string }) => c.field === 'spec.validationActions'));
  });

  it('denies with the upstream message, reason and code, and only in the tenant that owns the policy', async () => {
    await api
      .post(VAP)
      .send(
        validatingPolicy('max-keys', {
          matchConstraints: { resourceRules: [coreRule(['configmaps'])] },
          validations: [
            { expression: "!has(object.data) || object.data.size() <= 2", message: 'at most two keys' },
            { expression: "object.metadata.name != 'forbidden'", reason: 'Forbidden', messageExpression: "'name ' + object.metadata.name + ' is reserved'" },
          ],
        }),
      )
      .expect(201);
    await api.post(VAPB).send(validatingBinding('max-keys-binding', 'max-keys')).expect(201);
    const denied = await eventually(async () => {
      const res = await api.post('/api/v1/namespaces/vap/configmaps').send(configMap('vap', 'big', { a: '1', b: '2', c: '3' }));
      assert.equal(res.status, 422, JSON.stringify(res.body));
      return res;
    });
    assert.equal(denied.body.kind, 'Status');
    assert.equal(denied.body.reason, 'Invalid');
    assert.equal(
      denied.body.message,
      `configmaps "big" is forbidden: ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys-binding' denied request: at most two keys`,
    );
    assert.deepEqual(denied.body.details.causes, [{ message: `ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys-binding' denied request: at most two keys` }]);
    const forbidden = await api.post('/api/v1/namespaces/vap/configmaps').send(configMap('vap', 'forbidden')).expect(403);
    assert.equal(forbidden.body.reason, 'Forbidden');
    assert.match(forbidden.body.message, /denied request: name forbidden is reserved$/);
    await api.post('/api/v1/namespaces/vap/configmaps').send(configMap('vap', 'small', { a: '1' })).expect(201);
    // The same request in another tenant is not affected.
    const other = request(`${s.url}/clusters/other`);
    await ensureNamespace(other, 'vap');
    await other.post('/api/v1/namespaces/vap/configmaps').send(configMap('vap', 'big', { a: '1', b: '2', c: '3' })).expect(201);
    // Updates are checked too.
    const upd = await api.patch('/api/v1/namespaces/vap/configmaps/small').set('Content-Type', 'application/merge-patch+json').send({ data: { b: '2', c: '3' } });
    assert.equal(upd.status, 422);
  });

  it('warns and audits without denying', async () => {
    await api
      .post(VAP)
      .send(
        validatingPolicy('warn-label', {
          matchConstraints: { resourceRules: [coreRule(['configmaps'])] },
          validations: [{ expression: "has(object.metadata.labels) && 'team' in object.metadata.labels", message: 'configmaps should have a team label' }],
        }),
      )
      .expect(201);
    await api.post(VAPB).send(validatingBinding('warn-label', 'warn-label', { validationActions: ['Warn', 'Audit'] })).expect(201);
    const res = await eventually(async () => {
      const r = await api.post('/api/v1/namespaces/vap/configmaps').send({ metadata: { generateName: 'warned-' }, data: {} });
      assert.equal(r.status, 201);
      assert.ok(r.headers.warning, 'a warning header');
      return r;
    });
    assert.match(res.headers.warning, /^299 - "Validation failed for ValidatingAdmissionPolicy 'warn-label' with binding 'warn-label': configmaps should have a team label"$/);
    const labelled = await api.post('/api/v1/namespaces/vap/configmaps').send({ metadata: { generateName: 'labelled-', labels: { team: 'a' } }, data: {} }).expect(201);
    assert.equal(labelled.headers.warning, undefined);
  });

  it('writes status.typeChecking warnings for expressions that do not type-check against the matched kinds', async () => {
    const res = await api
      .post(VAP)
      .send(
        validatingPolicy('typed', {
          matchConstraints: { resourceRules: [coreRule(['configmaps'])] },
          validations: [
            { expression: 'object.metadata.name.size() < 64' },
            { expression: "object.metadata.nmae == 'x'", messageExpression: 'object.data.size() + 1' },
          ],
        }),
      )
      .expect(201);
    assert.equal(res.body.status.observedGeneration, 1);
    const warnings = res.body.status.typeChecking.expressionWarnings;
    assert.deepEqual(warnings.map((w: { fieldRef: string }) => w.fieldRef), ['spec.validations[1].expression']);
    assert.match(warnings[0].warning, /^\/v1, Kind=ConfigMap: ERROR: <input>:1:\d+: undefined field 'nmae'\n$/);
    // A wildcard policy has nothing to check against: typeChecking is present and empty.
    const wild = await api
      .post(VAP)
      .send(validatingPolicy('typed-wild', { matchConstraints: { resourceRules: [{ apiGroups: ['*'], apiVersions: ['*'], operations: ['CREATE'], resources: ['*'] }] }, validations: [{ expression: 'object.nothing == 1' }] }))
      .expect(201);
    assert.deepEqual(wild.body.status.typeChecking, {});
    // A spec change recomputes it; status sent by clients on the main resource is ignored.
    const fixed = await api
      .patch(`${VAP}/typed`)
      .set('Content-Type', 'application/json-patch+json')
      .send([{ op: 'replace', path: '/spec/validations/1/expression', value: "object.metadata.name != 'x'" }, { op: 'add', path: '/status/observedGeneration', value: 99 }])
      .expect(200);
    assert.equal(fixed.body.metadata.generation, 2);
    assert.equal(fixed.body.status.observedGeneration, 2);
    assert.deepEqual(fixed.body.status.typeChecking, {});
  });

  it('type-checks expressions against the structural schema of custom resources the rules name', async () => {
    await installCrd(api, widgetCrd({ group: 'typed.example.com' }));
    const rule = { apiGroups: ['typed.example.com'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['widgets'] };
    const res = await api
      .post(VAP)
      .send(
        validatingPolicy('typed-crd', {
          matchConstraints: { resourceRules: [rule] },
          validations: [
            { expression: 'object.spec.size <= 5 && object.metadata.name.size() < 20 && object.apiVersion != ""' },
            { expression: 'object.spec.colour == "red"' },
            { expression: 'object.spec.size == "big"' },
          ],
        }),
      )
      .expect(201);
    const warnings = res.body.status.typeChecking.expressionWarnings as Array<{ fieldRef: string; warning: string }>;
    assert.deepEqual(warnings.map((w) => w.fieldRef), ['spec.validations[1].expression', 'spec.validations[2].expression'], JSON.stringify(warnings));
    assert.match(warnings[0].warning, /^typed\.example\.com\/v1, Kind=Widget: ERROR: <input>:1:\d+: undefined field 'colour'\n$/);
    // The wording of overload errors is the CEL library's (cel-go says "found no matching overload for '_==_' applied to '(int, string)'").
    assert.match(warnings[1].warning, /^typed\.example\.com\/v1, Kind=Widget: ERROR: <input>:1:\d+: .*int == string/);
  });

  it('types params by the paramKind\'s schema when it is served (a ConfigMap, a custom resource), dyn otherwise', async () => {
    const rules = { resourceRules: [coreRule(['configmaps'])] };
    const byConfigMap = await api
      .post(VAP)
      .send(
        validatingPolicy('typed-params', {
          paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
          matchConstraints: rules,
          validations: [{ expression: "params.data.limit == object.data.limit" }, { expression: "params.dataa.limit == 'x'" }, { expression: 'params.data.limit > 3' }],
        }),
      )
      .expect(201);
    const w = byConfigMap.body.status.typeChecking.expressionWarnings as Array<{ fieldRef: string; warning: string }>;
    assert.deepEqual(w.map((x) => x.fieldRef), ['spec.validations[1].expression', 'spec.validations[2].expression'], JSON.stringify(w));
    assert.match(w[0].warning, /^\/v1, Kind=ConfigMap: ERROR: <input>:1:\d+: undefined field 'dataa'\n$/);
    assert.match(w[1].warning, /string > int/);
    // A custom resource as paramKind (the Widget of typed.example.com installed above): typed by its structural schema.
    const byWidget = await api
      .post(VAP)
      .send(validatingPolicy('typed-params-cr', { paramKind: { apiVersion: 'typed.example.com/v1', kind: 'Widget' }, matchConstraints: rules, validations: [{ expression: 'params.spec.size > 1' }, { expression: 'params.spec.colour == "red"' }] }))
      .expect(201);
    const cw = byWidget.body.status.typeChecking.expressionWarnings as Array<{ fieldRef: string; warning: string }>;
    assert.deepEqual(cw.map((x) => x.fieldRef), ['spec.validations[1].expression'], JSON.stringify(cw));
    assert.match(cw[0].warning, /undefined field 'colour'/);
    // A paramKind nobody serves leaves params dyn: nothing to warn about.
    const unknown = await api
      .post(VAP)
      .send(validatingPolicy('typed-params-unknown', { paramKind: { apiVersion: 'nowhere.example.com/v1', kind: 'Thing' }, matchConstraints: rules, validations: [{ expression: 'params.anything.goes == 1' }] }))
      .expect(201);
    assert.deepEqual(unknown.body.status.typeChecking, {});
  });

  it('type-checks a policy again once a custom resource it names is served (CRD created after the policy)', async () => {
    const rule = { apiGroups: ['later.example.com'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['widgets'] };
    const early = await api.post(VAP).send(validatingPolicy('typed-later', { matchConstraints: { resourceRules: [rule] }, validations: [{ expression: 'object.spec.colour == "red"' }] })).expect(201);
    assert.deepEqual(early.body.status.typeChecking, {}, 'nothing to check against yet');
    const unrelated = await api.post(VAP).send(validatingPolicy('typed-unrelated', { matchConstraints: { resourceRules: [coreRule(['configmaps'])] }, validations: [{ expression: 'true' }] })).expect(201);
    await installCrd(api, widgetCrd({ group: 'later.example.com' }));
    const checked = await eventually(async () => {
      const r = await api.get(`${VAP}/typed-later`).expect(200);
      assert.equal(r.body.status.typeChecking.expressionWarnings?.length, 1, JSON.stringify(r.body.status));
      return r;
    });
    assert.match(checked.body.status.typeChecking.expressionWarnings[0].warning, /^later\.example\.com\/v1, Kind=Widget: ERROR: <input>:1:\d+: undefined field 'colour'\n$/);
    assert.equal(checked.body.status.observedGeneration, 1);
    assert.equal(checked.body.metadata.generation, 1);
    // A policy whose result did not change is not written.
    const same = await api.get(`${VAP}/typed-unrelated`).expect(200);
    assert.equal(same.body.metadata.resourceVersion, unrelated.body.metadata.resourceVersion);
  });

  it('serves validatingadmissionpolicies/status: the spec and reset metadata stay, the status is validated and kept while current', async () => {
    const created = await api
      .post(VAP)
      .send(validatingPolicy('with-status', { matchConstraints: { resourceRules: [coreRule(['configmaps'])] }, validations: [{ expression: "object.metadata.nmae == 'x'" }] }))
      .expect(201);
    assert.equal(created.body.status.typeChecking.expressionWarnings.length, 1);
    const status = await api.get(`${VAP}/with-status/status`).expect(200);
    assert.deepEqual(status.body.status, created.body.status);
    const condition = { type: 'Reviewed', status: 'True', reason: 'ByHand', message: 'checked', lastTransitionTime: '2026-01-01T00:00:00Z' };
    const written = await api
      .put(`${VAP}/with-status/status`)
      .send({
        ...status.body,
        metadata: { ...status.body.metadata, labels: { ignored: 'true' } },
        spec: { ...status.body.spec, validations: [{ expression: 'false' }] },
        status: { observedGeneration: 1, typeChecking: {}, conditions: [condition] },
      })
      .expect(200);
    assert.deepEqual(written.body.spec.validations, [{ expression: "object.metadata.nmae == 'x'" }]);
    assert.equal(written.body.metadata.labels, undefined);
    assert.equal(written.body.metadata.generation, 1);
    assert.deepEqual(written.body.status, { observedGeneration: 1, typeChecking: {}, conditions: [condition] });
    // A status behind the generation is recomputed, as upstream's controller does; conditions stay.
    const stale = await api
      .patch(`${VAP}/with-status/status`)
      .set('Content-Type', 'application/merge-patch+json')
      .send({ status: { observedGeneration: 0 } })
      .expect(200);
    assert.equal(stale.body.status.observedGeneration, 1);
    assert.equal(stale.body.status.typeChecking.expressionWarnings[0].fieldRef, 'spec.validations[0].expression');
    assert.deepEqual(stale.body.status.conditions, [condition]);
    // Upstream's status validation.
    const bad = await api
      .patch(`${VAP}/with-status/status`)
      .set('Content-Type', 'application/merge-patch+json')
      .send({ status: { typeChecking: { expressionWarnings: [{ fieldRef: 'spec[', warning: '' }] }, conditions: [{ type: 'Ok', status: 'Maybe', reason: '9lives', lastTransitionTime: '2026-01-01T00:00:00Z' }] } })
      .expect(422);
    const causes = bad.body.details.causes.map((c: { field: string; reason: string }) => `${c.reason} ${c.field}`);
    assert.deepEqual(causes, [
      'FieldValueRequired status.typeChecking.expressionWarnings[0].warning',
      'FieldValueInvalid status.typeChecking.expressionWarnings[0].fieldRef',
      'FieldValueNotSupported status.conditions[0].status',
      'FieldValueInvalid status.conditions[0].reason',
    ]);
    // The binding has no status subresource, as upstream.
    await api.get(`${VAPB}/anything/status`).expect(404);
    const v1 = await api.get('/apis/admissionregistration.k8s.io/v1').expect(200);
    const names = v1.body.resources.map((r: { name: string }) => r.name);
    assert.ok(names.includes('validatingadmissionpolicies/status') && !names.includes('validatingadmissionpolicybindings/status'));
  });

  it('follows namespace label changes for namespaceSelector', async () => {
    await ensureNamespace(api, 'relabel');
    await api
      .post(VAP)
      .send(validatingPolicy('locked-ns', { matchConstraints: { resourceRules: [coreRule(['secrets'])], namespaceSelector: { matchLabels: { locked: 'true' } } }, validations: [{ expression: 'false', message: 'namespace is locked' }] }))
      .expect(201);
    await api.post(VAPB).send(validatingBinding('locked-ns', 'locked-ns')).expect(201);
    await api.post('/api/v1/namespaces/relabel/secrets').send({ metadata: { name: 'before' } }).expect(201);
    await api.patch('/api/v1/namespaces/relabel').set('Content-Type', 'application/merge-patch+json').send({ metadata: { labels: { locked: 'true' } } }).expect(200);
    const denied = await eventually(async () => {
      const r = await api.post('/api/v1/namespaces/relabel/secrets').send({ metadata: { generateName: 'after-' } });
      assert.equal(r.status, 422);
      return r;
    });
    assert.match(denied.body.message, /denied request: namespace is locked$/);
    await api.patch('/api/v1/namespaces/relabel').set('Content-Type', 'application/merge-patch+json').send({ metadata: { labels: { locked: null } } }).expect(200);
    await eventually(async () => {
      const r = await api.post('/api/v1/namespaces/relabel/secrets').send({ metadata: { generateName: 'unlocked-' } });
      assert.equal(r.status, 201);
    });
  });

  it('stops applying a policy once its binding is deleted', async () => {
    await api.delete(`${VAPB}/max-keys-binding`).expect(200);
    await eventually(async () => {
      const res = await api.post('/api/v1/namespaces/vap/configmaps').send({ metadata: { generateName: 'big-' }, data: { a: '1', b: '2', c: '3' } });
      assert.equal(res.status, 201);
    });
  });
});
