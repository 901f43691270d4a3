import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { installCrd, widgetCrd } from '../crd/crd-fixtures.js';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { startTestServer, startTestServerOn, type TestServer } from '../support/test-server.js';
import { eventually } from '../support/eventually.js';

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases';
const FROBBERS = '/apis/gates.example.com/v1/namespaces/default/frobbers';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const GATES = ['CoordinatedLeaderElection', 'Frobber2D', 'FrobberRestartPolicyOnTuesday'];
const TUESDAY_ONLY = 'spec.restartPolicy: Invalid value: "OnTuesday": only allowed if the FrobberRestartPolicyOnTuesday feature is enabled';

/** The api_changes.md example as a CRD: `width` behind Frobber2D, the enum value OnTuesday behind FrobberRestartPolicyOnTuesday. */
function frobberSchema(widthGate = 'Frobber2D'): Record<string, unknown> {
  return {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          height: { type: 'integer' },
          width: { type: 'integer', description: 'width indicates how wide the object is.', 'x-plinth-feature-gate': widthGate },
          restartPolicy: { type: 'string', enum: ['Always', 'Never', 'OnTuesday'], 'x-plinth-feature-gated-values': { OnTuesday: 'FrobberRestartPolicyOnTuesday' } },
        },
      },
    },
  };
}

function frobber(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: 'gates.example.com/v1', kind: 'Frobber', metadata: { name }, spec };
}

function lease(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: 'a', ...spec } };
}

/** Replaces the stored object's spec with `spec` (a PUT carrying the stored resourceVersion). */
async function putSpec(api: ReturnType<typeof request>, path: string, spec: Record<string, unknown>): Promise<request.Response> {
  const cur = await api.get(path).expect(200);
  return api.put(path).send({ ...cur.body, spec });
}

// Every phase sets every gate explicitly (never assume a default), and restarts the server over the same database.
describe('feature gates: gated fields and enum values, for a built-in kind (Lease) and a CRD', { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let s: TestServer | undefined;
  let api: ReturnType<typeof request>;

  async function restart(on: boolean): Promise<void> {
    await s?.close();
    s = await startTestServerOn(database, {
      PLINTH_FEATURE_GATE_DEFINITIONS: 'Frobber2D=Alpha,FrobberRestartPolicyOnTuesday=Alpha',
      PLINTH_FEATURE_GATES: GATES.map((g) => `${g}=${on}`).join(','),
    });
    api = request(s.url);
  }

  before(async () => {
    database = await createTestDatabase('gated-fields');
    await restart(false);
  });
  after(async () => {
    await s?.close();
    await database?.drop();
  });

  it('refuses CRDs naming unknown gates or gating values outside the enum', async () => {
    const unknown = await api.post(CRDS).send(widgetCrd({ group: 'gates.example.com', plural: 'frobbers', kind: 'Frobber', schema: frobberSchema('Frobber3D') })).expect(422);
    const causes = unknown.body.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`);
    assert.deepEqual(causes, ['spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[width].x-plinth-feature-gate: Invalid value: "Frobber3D": unrecognized feature gate']);
    const schema = frobberSchema();
    ((schema.properties as Record<string, { properties: Record<string, Record<string, unknown>> }>).spec.properties.restartPolicy)['x-plinth-feature-gated-values'] = { OnWednesday: 'Frobber2D' };
    const outside = await api.post(CRDS).send(widgetCrd({ group: 'gates.example.com', plural: 'frobbers', kind: 'Frobber', schema })).expect(422);
    assert.match(outside.body.message, /properties\[restartPolicy\]\.x-plinth-feature-gated-values\[OnWednesday\]: Invalid value: "OnWednesday": must be one of the values in enum/);
  });

  it('gates off: drops gated fields and refuses gated enum values on create; says so in OpenAPI', async () => {
    await installCrd(api, widgetCrd({ group: 'gates.example.com', plural: 'frobbers', kind: 'Frobber', schema: frobberSchema() }));
    const a = await api.post(FROBBERS).send(frobber('a', { height: 1, width: 3, restartPolicy: 'Always' })).expect(201);
    assert.deepEqual(a.body.spec, { height: 1, restartPolicy: 'Always' });
    const tuesday = await api.post(FROBBERS).send(frobber('b', { restartPolicy: 'OnTuesday' })).expect(422);
    assert.match(tuesday.body.message, new RegExp(TUESDAY_ONLY.replace(/[.*?()[\]]/g, '\\$&')));
    const l = await api.post(LEASES).send(lease('off', { strategy: 'OldestEmulationVersion', preferredHolder: 'b' })).expect(201);
    assert.equal(l.body.spec.strategy, undefined);
    assert.equal(l.body.spec.preferredHolder, undefined);
    const v2 = await api.get('/openapi/v2').expect(200);
    const def = Object.entries(v2.body.definitions as Record<string, { properties: Record<string, { properties: Record<string, { description?: string }> }> }>).find(([k]) => k.endsWith('.Frobber'))?.[1];
    assert.equal(def?.properties.spec.properties.width.description, 'width indicates how wide the object is. This field is alpha-level and is only honored by servers that enable the Frobber2D feature.');
    assert.equal(def?.properties.spec.properties.restartPolicy.description, 'The value "OnTuesday" is alpha-level and is only honored by servers that enable the FrobberRestartPolicyOnTuesday feature.');
    const explain = await kubectl(writeTestKubeconfig(s!.url), ['explain', 'frobbers.spec.width']);
    assert.equal(explain.code, 0, explain.stderr);
    assert.match(explain.stdout.replace(/\s+/g, ' '), /width indicates how wide the object is\. This field is alpha-level and is only honored by servers that enable the Frobber2D feature\./);
  });

  it('gates on: keeps gated fields and accepts gated enum values, on create and update', async () => {
    await restart(true);
    const c = await api.post(FROBBERS).send(frobber('c', { height: 1, width: 5, restartPolicy: 'OnTuesday' })).expect(201);
    assert.deepEqual(c.body.spec, { height: 1, width: 5, restartPolicy: 'OnTuesday' });
    const a = await putSpec(api, `${FROBBERS}/a`, { height: 1, width: 4, restartPolicy: 'OnTuesday' });
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.deepEqual(a.body.spec, { height: 1, width: 4, restartPolicy: 'OnTuesday' });
    const l = await api.post(LEASES).send(lease('on', { strategy: 'OldestEmulationVersion', preferredHolder: 'b' })).expect(201);
    assert.equal(l.body.spec.strategy, 'OldestEmulationVersion');
    assert.equal(l.body.spec.preferredHolder, 'b');
    // Present fields are validated.
    const bad = await api.post(LEASES).send(lease('bad', { preferredHolder: 'b' })).expect(422);
    assert.match(bad.body.message, /spec\.preferredHolder: Forbidden: may only be specified if `strategy` is defined/);
  });

  it('gates off again: stored data is kept and may still be updated; new uses are dropped or refused', async () => {
    await restart(false);
    const c = await api.get(`${FROBBERS}/c`).expect(200);
    assert.deepEqual(c.body.spec, { height: 1, width: 5, restartPolicy: 'OnTuesday' });
    const kept = await putSpec(api, `${FROBBERS}/c`, { height: 2, width: 6, restartPolicy: 'OnTuesday' });
    assert.equal(kept.status, 200, JSON.stringify(kept.body));
    assert.deepEqual(kept.body.spec, { height: 2, width: 6, restartPolicy: 'OnTuesday' });
    await api.post(FROBBERS).send(frobber('d', { height: 1, restartPolicy: 'Never' })).expect(201);
    const dropped = await putSpec(api, `${FROBBERS}/d`, { height: 1, width: 2, restartPolicy: 'Never' });
    assert.deepEqual(dropped.body.spec, { height: 1, restartPolicy: 'Never' });
    const refused = await putSpec(api, `${FROBBERS}/d`, { height: 1, restartPolicy: 'OnTuesday' });
    assert.equal(refused.status, 422);
    assert.ok(refused.body.message.includes(TUESDAY_ONLY), refused.body.message);
    const on = await putSpec(api, `${LEASES}/on`, { holderIdentity: 'c', strategy: 'OldestEmulationVersion', preferredHolder: 'b' });
    assert.equal(on.body.spec.strategy, 'OldestEmulationVersion');
    const off = await putSpec(api, `${LEASES}/off`, { holderIdentity: 'c', strategy: 'OldestEmulationVersion' });
    assert.equal(off.body.spec.strategy, undefined);
  });
});

describe('feature gates a tenant defines (features.plinth.dev/v1alpha1 FeatureGate) for its CRDs', { timeout: 120_000 }, () => {
  const GATES_API = '/apis/features.plinth.dev/v1alpha1/featuregates';
  const WIDGETS = '/apis/tenant.example.com/v1/namespaces/default/widgets';
  let s: TestServer;
  let api: ReturnType<typeof request>;
  const widgetSchema = {
    type: 'object',
    properties: { spec: { type: 'object', properties: { size: { type: 'integer' }, depth: { type: 'integer', 'x-plinth-feature-gate': 'Widgets3D' } } } },
  };
  const widget = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'tenant.example.com/v1', kind: 'Widget', metadata: { name }, spec });
  const gate = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'features.plinth.dev/v1alpha1', kind: 'FeatureGate', metadata: { name }, spec });

  before(async () => {
    s = await startTestServer('tenant-gates', { PLINTH_TENANTS: 'other', PLINTH_FEATURE_GATES: 'CoordinatedLeaderElection=false' });
    api = request(s.url);
  });
  after(async () => s?.close());

  it('validates gate definitions: one object per gate, no server gate names, GA locked; defaults by stage', async () => {
    const mismatch = await api.post(GATES_API).send(gate('other-name', { name: 'Widgets3D', stage: 'Alpha' })).expect(422);
    assert.match(mismatch.body.message, /metadata\.name: Invalid value: "other-name": must be spec\.name in lower case/);
    const server = await api.post(GATES_API).send(gate('serversideapply', { name: 'ServerSideApply', stage: 'Beta' })).expect(422);
    assert.match(server.body.message, /spec\.name: Invalid value: "ServerSideApply": is a feature gate of the server/);
    const locked = await api.post(GATES_API).send(gate('done', { name: 'Done', stage: 'GA', enabled: false })).expect(422);
    assert.match(locked.body.message, /spec\.enabled: Invalid value: false: cannot set feature gate Done to false, feature is locked to true/);
    const created = await api.post(GATES_API).send(gate('widgets3d', { name: 'Widgets3D', stage: 'Alpha', enabled: false })).expect(201);
    assert.equal(created.body.spec.default, false);
  });

  it('lets the tenant\'s CRDs name its gates, and only that tenant\'s', async () => {
    const crd = widgetCrd({ group: 'tenant.example.com', schema: widgetSchema });
    const elsewhere = await request(`${s.url}/clusters/other`).post(CRDS).send(crd).expect(422);
    assert.match(elsewhere.body.message, /properties\[depth\]\.x-plinth-feature-gate: Invalid value: "Widgets3D": unrecognized feature gate/);
    await installCrd(api, crd);
    const depth = async () => {
      const v2 = await api.get('/openapi/v2').expect(200);
      const def = Object.entries(v2.body.definitions as Record<string, { properties: Record<string, { properties: Record<string, { description?: string }> }> }>).find(([k]) => k.endsWith('.Widget'))?.[1];
      return def?.properties.spec.properties.depth.description;
    };
    assert.equal(await depth(), 'This field is alpha-level and is only honored by servers that enable the Widgets3D feature.');
    // A change of the gate's stage reaches the published schema.
    await api.patch(`${GATES_API}/widgets3d`).set('Content-Type', 'application/merge-patch+json').send({ spec: { stage: 'Beta', default: false } }).expect(200);
    await eventually(async () => (await depth())?.includes('beta-level') === true, { timeoutMs: 5000, message: 'beta-level description' });
    await api.patch(`${GATES_API}/widgets3d`).set('Content-Type', 'application/merge-patch+json').send({ spec: { stage: 'Alpha' } }).expect(200);
  });

  it('applies a switch of the tenant\'s gate to the next write, keeping stored data when it is turned off again', async () => {
    const off = await api.post(WIDGETS).send(widget('w1', { size: 1, depth: 2 })).expect(201);
    assert.deepEqual(off.body.spec, { size: 1 });
    await api.patch(`${GATES_API}/widgets3d`).set('Content-Type', 'application/merge-patch+json').send({ spec: { enabled: true } }).expect(200);
    const on = await api.post(WIDGETS).send(widget('w2', { size: 1, depth: 2 })).expect(201);
    assert.deepEqual(on.body.spec, { size: 1, depth: 2 });
    await api.patch(`${GATES_API}/widgets3d`).set('Content-Type', 'application/merge-patch+json').send({ spec: { enabled: false } }).expect(200);
    const kept = await putSpec(api, `${WIDGETS}/w2`, { size: 2, depth: 3 });
    assert.deepEqual(kept.body.spec, { size: 2, depth: 3 });
    const dropped = await putSpec(api, `${WIDGETS}/w1`, { size: 2, depth: 3 });
    assert.deepEqual(dropped.body.spec, { size: 2 });
  });
});
