import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { certificateIdentity, requestAs } from '../support/credentials.js';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { grantInNamespace } from '../support/rbac.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { eventually } from '../support/eventually.js';

const CM = '/api/v1/namespaces/gc/configmaps';

// Garbage collection by ownerReferences, driven by kubectl delete --cascade as a user would.
describe('garbage collection by ownerReferences', { timeout: 120_000 }, () => {
  let s: TestServer;
  let kc: string;
  const api = () => request(s.url);
  const owner = async (name: string) => (await api().post(CM).send({ metadata: { name } }).expect(201)).body as { metadata: { uid: string } };
  const ref = (name: string, uid: string, block = false) => ({ apiVersion: 'v1', kind: 'ConfigMap', name, uid, ...(block ? { blockOwnerDeletion: true } : {}) });
  const dependent = (name: string, refs: object[]) => api().post(CM).send({ metadata: { name, ownerReferences: refs } }).expect(201);
  const exists = async (name: string) => (await api().get(`${CM}/${name}`)).status === 200;

  before(async () => {
    s = await startTestServer('gc');
    kc = writeTestKubeconfig(s.url);
    await api().post('/api/v1/namespaces').send({ metadata: { name: 'gc' } }).expect(201);
  });
  after(async () => s?.close());

  it('--cascade=background deletes the owner at once and its dependents after, and theirs in turn', async () => {
    const o = await owner('bg-owner');
    const child = (await dependent('bg-child', [ref('bg-owner', o.metadata.uid)])).body;
    await dependent('bg-grandchild', [ref('bg-child', child.metadata.uid)]);
    const out = await kubectl(kc, ['delete', 'configmap', 'bg-owner', '-n', 'gc', '--cascade=background']);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(await exists('bg-owner'), false);
    await eventually(async () => !(await exists('bg-child')) && !(await exists('bg-grandchild')), { timeoutMs: 20_000, message: 'dependents collected' });
  });

  it('keeps a dependent that still has a live owner, dropping only the dangling reference', async () => {
    const a = await owner('two-a');
    const b = await owner('two-b');
    await dependent('two-child', [ref('two-a', a.metadata.uid), ref('two-b', b.metadata.uid)]);
    await api().delete(`${CM}/two-a`).expect(200);
    await eventually(async () => {
      const c = await api().get(`${CM}/two-child`);
      return c.status === 200 && c.body.metadata.ownerReferences?.length === 1;
    }, { timeoutMs: 20_000, message: 'the dangling reference removed' });
    const c = (await api().get(`${CM}/two-child`).expect(200)).body;
    assert.deepEqual(c.metadata.ownerReferences.map((r: { name: string }) => r.name), ['two-b']);
  });

  it('--cascade=orphan keeps the dependents and removes the owner from their ownerReferences, then the owner goes', async () => {
    const o = await owner('or-owner');
    await dependent('or-child', [ref('or-owner', o.metadata.uid)]);
    const out = await kubectl(kc, ['delete', 'configmap', 'or-owner', '-n', 'gc', '--cascade=orphan']);
    assert.equal(out.code, 0, out.stderr);
    await eventually(async () => !(await exists('or-owner')), { timeoutMs: 20_000, message: 'the owner gone once orphaning is done' });
    const c = (await api().get(`${CM}/or-child`).expect(200)).body;
    assert.equal(c.metadata.ownerReferences, undefined);
  });

  it('--cascade=foreground keeps the owner (deletionTimestamp, foregroundDeletion) until its blocking dependents are gone', async () => {
    const o = await owner('fg-owner');
    await dependent('fg-child', [ref('fg-owner', o.metadata.uid, true)]);
    const del = await api().delete(`${CM}/fg-owner`).send({ kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' }).expect(202);
    assert.ok(del.body.metadata.deletionTimestamp);
    assert.deepEqual(del.body.metadata.finalizers, ['foregroundDeletion']);
    await eventually(async () => !(await exists('fg-child')) && !(await exists('fg-owner')), { timeoutMs: 20_000, message: 'dependent, then owner, gone' });
  });

  it('lets only users who may update the owner\'s finalizers set blockOwnerDeletion (OwnerReferencesPermissionEnforcement)', async () => {
    const o = await owner('guarded');
    await grantInNamespace(s.url, 'gc', 'jane-edit', 'edit', [{ kind: 'User', name: 'jane' }]);
    const jane = requestAs(s.url, await certificateIdentity('jane'));
    await jane.post(CM).send({ metadata: { name: 'plain-ref', ownerReferences: [ref('guarded', o.metadata.uid)] } }).expect(201);
    const refused = await jane.post(CM).send({ metadata: { name: 'blocking-ref', ownerReferences: [ref('guarded', o.metadata.uid, true)] } }).expect(403);
    assert.match(refused.body.message, /^configmaps "blocking-ref" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: /);
    await api()
      .post('/apis/rbac.authorization.k8s.io/v1/namespaces/gc/roles')
      .send({ metadata: { name: 'cm-finalizers' }, rules: [{ apiGroups: [''], resources: ['configmaps/finalizers'], verbs: ['update'] }] })
      .expect(201);
    await api()
      .post('/apis/rbac.authorization.k8s.io/v1/namespaces/gc/rolebindings')
      .send({ metadata: { name: 'jane-finalizers' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-finalizers' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'jane' }] })
      .expect(201);
    await jane.post(CM).send({ metadata: { name: 'blocking-ref', ownerReferences: [ref('guarded', o.metadata.uid, true)] } }).expect(201);
  });

  it('collects dependents whose owner uid never existed, and refuses unknown propagation policies', async () => {
    await dependent('ghost-child', [ref('ghost', '00000000-0000-0000-0000-000000000000')]);
    await eventually(async () => !(await exists('ghost-child')), { timeoutMs: 20_000, message: 'collected by the sweep' });
    const o = await owner('bad-policy');
    const bad = await api().delete(`${CM}/bad-policy`).send({ propagationPolicy: 'Sometimes' }).expect(400);
    assert.match(bad.body.message, /propagationPolicy: Unsupported value: "Sometimes"/);
    assert.ok(o.metadata.uid);
  });
});
