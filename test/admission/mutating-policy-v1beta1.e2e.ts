import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import request from 'supertest';
import { createDatabase } from '@plinth/storage';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { eventually } from '../support/eventually.js';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { configMap, coreRule, ensureNamespace } from './support/policies.js';

const GROUP = '/apis/admissionregistration.k8s.io';
const CM = '/api/v1/namespaces/beta/configmaps';
const labelling = [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"mutated-by": "beta"}}}' } }];

function policy(version: string, name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: `admissionregistration.k8s.io/${version}`,
    kind: 'MutatingAdmissionPolicy',
    metadata: { name },
    spec: { matchConstraints: { resourceRules: [coreRule(['configmaps'], ['CREATE'])] }, ...spec },
  };
}

function binding(version: string, name: string, policyName: string): Record<string, unknown> {
  return { apiVersion: `admissionregistration.k8s.io/${version}`, kind: 'MutatingAdmissionPolicyBinding', metadata: { name }, spec: { policyName } };
}

/** The stored apiVersion of each MutatingAdmissionPolicy row of the default tenant, by name. */
async function storedVersions(s: TestServer): Promise<Record<string, string>> {
  const db = createDatabase({ connectionString: s.database.url, maxConnections: 1 });
  try {
    const { rows } = await sql<{ name: string; v: string }>`
      SELECT name, body->>'apiVersion' AS v FROM objects
      WHERE tenant = 'default' AND resource = 'admissionregistration.k8s.io/mutatingadmissionpolicies'`.execute(db);
    return Object.fromEntries(rows.map((r) => [r.name, r.v]));
  } finally {
    await db.destroy();
  }
}

describe('MutatingAdmissionPolicy v1beta1 (1.34+ beta): gate and API version off by default', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer('map-beta-off');
  });
  after(async () => {
    await s?.close();
  });

  it('does not serve admissionregistration.k8s.io/v1beta1 without PLINTH_RUNTIME_CONFIG, as upstream (new beta APIs are off)', async () => {
    const api = request(s.url);
    await api.get(`${GROUP}/v1beta1/mutatingadmissionpolicies`).expect(404);
    const group = await api.get(`${GROUP}`).expect(200);
    assert.deepEqual(group.body.versions.map((v: { version: string }) => v.version), ['v1']);
  });
});

describe('MutatingAdmissionPolicy v1beta1 next to v1alpha1', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;

  before(async () => {
    s = await startTestServer('map-beta', {
      PLINTH_FEATURE_GATES: 'MutatingAdmissionPolicy=true',
      PLINTH_RUNTIME_CONFIG: 'admissionregistration.k8s.io/v1beta1=true,admissionregistration.k8s.io/v1alpha1=true',
    });
    api = request(s.url);
    await ensureNamespace(api, 'beta');
  });
  after(async () => {
    await s?.close();
  });

  it('lists v1beta1 and v1alpha1 in discovery, v1 still preferred', async () => {
    const group = await api.get(GROUP).expect(200);
    assert.deepEqual(group.body.versions.map((v: { version: string }) => v.version), ['v1', 'v1beta1', 'v1alpha1']);
    assert.equal(group.body.preferredVersion.version, 'v1');
    const beta = await api.get(`${GROUP}/v1beta1`).expect(200);
    assert.deepEqual(beta.body.resources.map((r: { name: string }) => r.name).sort(), ['mutatingadmissionpolicies', 'mutatingadmissionpolicybindings']);
  });

  it("applies v1beta1's defaults: failurePolicy Fail and the match defaults, no default reinvocationPolicy (required)", async () => {
    const missing = await api.post(`${GROUP}/v1beta1/mutatingadmissionpolicies`).send(policy('v1beta1', 'no-reinvocation', { mutations: labelling })).expect(422);
    assert.deepEqual(
      missing.body.details.causes.map((c: { field: string; reason: string }) => `${c.reason} ${c.field}`),
      ['FieldValueRequired spec.reinvocationPolicy'],
    );
    const created = await api.post(`${GROUP}/v1beta1/mutatingadmissionpolicies`).send(policy('v1beta1', 'label', { mutations: labelling, reinvocationPolicy: 'IfNeeded' })).expect(201);
    assert.equal(created.body.apiVersion, 'admissionregistration.k8s.io/v1beta1');
    assert.equal(created.body.spec.failurePolicy, 'Fail');
    assert.equal(created.body.spec.reinvocationPolicy, 'IfNeeded');
    assert.deepEqual(created.body.spec.matchConstraints, {
      resourceRules: [{ ...coreRule(['configmaps'], ['CREATE']), scope: '*' }],
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
    });
  });

  it('stores v1beta1 (the 1.35 storage version) and converts both ways: a write through one version is read through the other', async () => {
    await api.post(`${GROUP}/v1alpha1/mutatingadmissionpolicies`).send(policy('v1alpha1', 'from-alpha', { mutations: labelling })).expect(201);
    const asBeta = await api.get(`${GROUP}/v1beta1/mutatingadmissionpolicies/from-alpha`).expect(200);
    assert.equal(asBeta.body.apiVersion, 'admissionregistration.k8s.io/v1beta1');
    assert.equal(asBeta.body.spec.reinvocationPolicy, 'Never', 'defaulted by the v1alpha1 write');
    const asAlpha = await api.get(`${GROUP}/v1alpha1/mutatingadmissionpolicies/label`).expect(200);
    assert.equal(asAlpha.body.apiVersion, 'admissionregistration.k8s.io/v1alpha1');
    assert.equal(asAlpha.body.spec.reinvocationPolicy, 'IfNeeded');
    const list = await api.get(`${GROUP}/v1alpha1/mutatingadmissionpolicies`).expect(200);
    assert.deepEqual(list.body.items.map((o: { apiVersion: string }) => o.apiVersion), ['admissionregistration.k8s.io/v1alpha1', 'admissionregistration.k8s.io/v1alpha1']);
    assert.deepEqual(await storedVersions(s), { 'from-alpha': 'admissionregistration.k8s.io/v1beta1', label: 'admissionregistration.k8s.io/v1beta1' });
    // An update through v1alpha1 of an object written through v1beta1 keeps its fields.
    const updated = await api
      .put(`${GROUP}/v1alpha1/mutatingadmissionpolicies/label`)
      .send({ ...asAlpha.body, metadata: { ...asAlpha.body.metadata, labels: { touched: 'yes' } } })
      .expect(200);
    assert.equal(updated.body.spec.reinvocationPolicy, 'IfNeeded');
    await api.delete(`${GROUP}/v1beta1/mutatingadmissionpolicies/from-alpha`).expect(200);
  });

  it('enforces a policy and binding created through v1beta1 (the existing mutating policy admission)', async () => {
    await api.post(`${GROUP}/v1beta1/mutatingadmissionpolicybindings`).send(binding('v1beta1', 'label', 'label')).expect(201);
    const created = await eventually(async () => {
      const name = `cm-${Date.now()}`;
      const r = await api.post(CM).send(configMap('beta', name, { a: '1' })).expect(201);
      assert.equal(r.body.metadata.labels?.['mutated-by'], 'beta', JSON.stringify(r.body));
      return r;
    });
    assert.equal(created.body.data.a, '1');
  });

  it('kubectl reads the policies at v1beta1 by its fully qualified resource name', async () => {
    const kubeconfig = writeTestKubeconfig(s.url);
    const out = await kubectl(kubeconfig, ['get', 'mutatingadmissionpolicies.v1beta1.admissionregistration.k8s.io', '-o', 'jsonpath={.items[*].apiVersion}']);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout.trim(), 'admissionregistration.k8s.io/v1beta1');
    const table = await kubectl(kubeconfig, ['get', 'mutatingadmissionpolicybindings.v1beta1.admissionregistration.k8s.io']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^NAME\s+POLICYNAME\s+PARAMREF\s+AGE\nlabel\s+label\s+<unset>/);
  });
});

describe('MutatingAdmissionPolicy v1beta1 with the gate off: stored, not enforced', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer('map-beta-gate-off', { PLINTH_RUNTIME_CONFIG: 'admissionregistration.k8s.io/v1beta1=true' });
  });
  after(async () => {
    await s?.close();
  });

  it('serves the API but does not run the admission plugin (upstream: the plugin needs the MutatingAdmissionPolicy gate)', async () => {
    const api = request(s.url);
    await ensureNamespace(api, 'beta');
    await api.post(`${GROUP}/v1beta1/mutatingadmissionpolicies`).send(policy('v1beta1', 'label', { mutations: labelling, reinvocationPolicy: 'Never' })).expect(201);
    await api.post(`${GROUP}/v1beta1/mutatingadmissionpolicybindings`).send(binding('v1beta1', 'label', 'label')).expect(201);
    await new Promise((r) => setTimeout(r, 500));
    const r = await api.post(CM).send(configMap('beta', 'plain')).expect(201);
    assert.equal(r.body.metadata.labels, undefined);
  });
});
