import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { withoutRootCa } from '../support/root-ca.js';
import { eventually } from '../support/eventually.js';

/** The kube-root-ca.crt ConfigMaps of a new tenant (default, kube-node-lease, kube-public, kube-system). */
const PUBLISHED = 4;

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';

interface Usage {
  objects: number;
  bytes: number;
  objectsPerResource: Record<string, number>;
}

// Tenant limits are counted in the write's own transaction: exact under any concurrency, and deletes give room back.
describe('tenant limits, exact at write time', { timeout: 180_000 }, () => {
  let s: TestServer;
  const api = () => request(s.url);
  const createTenant = (name: string, limits: Record<string, unknown>) =>
    api().post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name }, spec: { limits } }).expect(201);
  const usageOf = async (name: string): Promise<Usage> => (await api().get(`${TENANTS}/${name}`).expect(200)).body.status.usage;
  /** Sets spec.limits and waits until the new generation is provisioned (limits enforced). */
  const setLimits = async (name: string, limits: Record<string, unknown>) => {
    const t = (await api().patch(`${TENANTS}/${name}`).set('Content-Type', 'application/merge-patch+json').send({ spec: { limits } }).expect(200)).body;
    await eventually(async () => {
        const cur = (await api().get(`${TENANTS}/${name}`).expect(200)).body;
        return cur.status.conditions.some((c: { type: string; status: string; observedGeneration: number }) => c.type === 'Ready' && c.status === 'True' && c.observedGeneration >= t.metadata.generation);
      }, { timeoutMs: 15_000, message: 'limits provisioned' });
  };
  const cm = (tenant: string, name: string, data: Record<string, string> = {}) => api().post(`/clusters/${tenant}/api/v1/namespaces/default/configmaps`).send({ metadata: { name }, data });

  before(async () => {
    s = await startTestServer('tenant-limits');
  });
  after(async () => s?.close());

  it('admits exactly N of many racing creates, refuses the rest with upstream quota wording, and takes deletes back', async () => {
    // The tenant's four namespaces each hold a kube-root-ca.crt, counted as any ConfigMap: five more fit.
    const limit = PUBLISHED + 5;
    await createTenant('racers', { objectsPerResource: { configmaps: limit } });
    for (const [round, room] of [[0, 5], [1, 2], [2, 3]] as const) {
      const results = await Promise.all(Array.from({ length: 24 }, (_, i) => cm('racers', `r${round}-${i}`)));
      const created = results.filter((r) => r.status === 201);
      const refused = results.filter((r) => r.status === 403);
      assert.equal(created.length, room, `round ${round}: created ${created.length}`);
      assert.equal(refused.length, 24 - room, `round ${round}: statuses ${results.map((r) => r.status).join(',')}`);
      const name = refused[0].body.details.name;
      assert.equal(refused[0].body.reason, 'Forbidden');
      assert.equal(refused[0].body.message, `configmaps "${name}" is forbidden: exceeded tenant limit: racers, requested: count/configmaps=1, used: count/configmaps=${limit}, limited: count/configmaps=${limit}`);
      const list = withoutRootCa((await api().get('/clusters/racers/api/v1/namespaces/default/configmaps').expect(200)).body.items as { metadata: { name: string } }[]);
      assert.equal(list.length, 5);
      // Give back as much room as the next round expects.
      const next = round === 0 ? 2 : 3;
      for (const item of list.slice(0, next)) await api().delete(`/clusters/racers/api/v1/namespaces/default/configmaps/${item.metadata.name}`).expect(200);
    }
    await eventually(async () => (await usageOf('racers')).objectsPerResource.configmaps === PUBLISHED + 2, { timeoutMs: 15_000, message: 'status.usage follows' });
  });

  it('limits webhook configurations of both kinds together, and CustomResourceDefinitions', async () => {
    await createTenant('hooks', { webhookConfigurations: 1, customResourceDefinitions: 1 });
    const hook = (kind: string) => ({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: `${kind}WebhookConfiguration`,
      metadata: { name: kind.toLowerCase() },
      webhooks: [{ name: 'h.example.com', clientConfig: { url: 'https://hooks.example.invalid/x' }, rules: [{ operations: ['CREATE'], apiGroups: ['none.example.com'], apiVersions: ['*'], resources: ['*'] }], sideEffects: 'None', admissionReviewVersions: ['v1'] }],
    });
    await api().post('/clusters/hooks/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations').send(hook('Validating')).expect(201);
    const second = await api().post('/clusters/hooks/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations').send(hook('Mutating')).expect(403);
    assert.match(second.body.message, /exceeded tenant limit: hooks, requested: count\/webhookconfigurations=1, used: count\/webhookconfigurations=1, limited: count\/webhookconfigurations=1$/);
    const crd = (plural: string) => ({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${plural}.example.com` },
      spec: { group: 'example.com', scope: 'Namespaced', names: { plural, kind: plural[0].toUpperCase() + plural.slice(1, -1) }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }] },
    });
    await api().post('/clusters/hooks/apis/apiextensions.k8s.io/v1/customresourcedefinitions').send(crd('widgets')).expect(201);
    const more = await api().post('/clusters/hooks/apis/apiextensions.k8s.io/v1/customresourcedefinitions').send(crd('gadgets')).expect(403);
    assert.match(more.body.message, /requested: count\/customresourcedefinitions.apiextensions.k8s.io=1, used: count\/customresourcedefinitions.apiextensions.k8s.io=1, limited: count\/customresourcedefinitions.apiextensions.k8s.io=1$/);
  });

  it('limits all objects and stored bytes, on creates and on updates that grow an object', async () => {
    await createTenant('budget', {});
    const start = await usageOf('budget');
    assert.ok(start.objects > 0 && start.bytes > 0, 'provisioning is counted (namespaces, default roles)');
    await setLimits('budget', { objects: start.objects + 2, bytes: start.bytes + 6000 });
    await cm('budget', 'a', { v: 'x'.repeat(2000) }).expect(201);
    await cm('budget', 'b').expect(201);
    const third = await cm('budget', 'c').expect(403);
    assert.equal(third.body.message, `configmaps "c" is forbidden: exceeded tenant limit: budget, requested: count/*=1, used: count/*=${start.objects + 2}, limited: count/*=${start.objects + 2}`);
    // Growing "b" past the byte budget is refused; the object keeps its old content.
    const grow = await api().patch('/clusters/budget/api/v1/namespaces/default/configmaps/b').set('Content-Type', 'application/merge-patch+json').send({ data: { v: 'y'.repeat(5000) } }).expect(403);
    assert.match(grow.body.message, /exceeded tenant limit: budget, requested: bytes\/\*=\d+, used: bytes\/\*=\d+, limited: bytes\/\*=\d+$/);
    const b = (await api().get('/clusters/budget/api/v1/namespaces/default/configmaps/b').expect(200)).body;
    assert.equal(b.data?.v, undefined, 'the refused update changed nothing');
    // Shrinking is always allowed, and deleting gives room back.
    await api().patch('/clusters/budget/api/v1/namespaces/default/configmaps/a').set('Content-Type', 'application/merge-patch+json').send({ data: { v: 'small' } }).expect(200);
    await api().delete('/clusters/budget/api/v1/namespaces/default/configmaps/a').expect(200);
    await cm('budget', 'c').expect(201);
    // Removing the limits lifts them.
    await setLimits('budget', { objects: null, bytes: null });
    await cm('budget', 'd').expect(201);
    await eventually(async () => (await usageOf('budget')).objects === start.objects + 3, { timeoutMs: 15_000, message: 'usage reported' });
  });
});
