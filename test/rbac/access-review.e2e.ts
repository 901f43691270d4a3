import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { eventually } from '../support/eventually.js';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const AUTHZ = '/apis/authorization.k8s.io/v1';

type Attrs = { verb: string; resource?: string; group?: string; namespace?: string; name?: string; subresource?: string; path?: string };

describe('RBAC decisions through SubjectAccessReview', () => {
  let s: TestServer;
  const sar = async (user: string, groups: string[], a: Attrs, tenant = '') => {
    const spec: Record<string, unknown> = { user, groups };
    if (a.path !== undefined) spec.nonResourceAttributes = { path: a.path, verb: a.verb };
    else spec.resourceAttributes = { verb: a.verb, resource: a.resource, group: a.group ?? '', namespace: a.namespace ?? '', name: a.name ?? '', subresource: a.subresource ?? '' };
    const res = await request(s.url).post(`${tenant}${AUTHZ}/subjectaccessreviews`).send({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.status as { allowed: boolean; reason?: string };
  };
  const create = async (path: string, body: object) => {
    const res = await request(s.url).post(path).send(body);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body;
  };

  before(async () => {
    s = await startTestServer('rbac-sar', { PLINTH_TENANTS: 'acme' });
    await request(s.url).post('/api/v1/namespaces').send({ metadata: { name: 'team' } }).expect(201);
  });
  after(async () => s.close());

  it('bootstraps the default cluster roles and bindings in every tenant', async () => {
    for (const tenant of ['', '/clusters/acme']) {
      const roles = await request(s.url).get(`${tenant}${RBAC}/clusterroles`).expect(200);
      const names = roles.body.items.map((r: { metadata: { name: string } }) => r.metadata.name);
      for (const n of ['cluster-admin', 'admin', 'edit', 'view', 'system:discovery', 'system:basic-user', 'system:public-info-viewer']) assert.ok(names.includes(n), n);
      const crbs = await request(s.url).get(`${tenant}${RBAC}/clusterrolebindings/system:public-info-viewer`).expect(200);
      assert.deepEqual(crbs.body.subjects.map((x: { name: string }) => x.name), ['system:authenticated', 'system:unauthenticated']);
    }
  });

  it('aggregates view into edit into admin, with only kinds Plinth serves', async () => {
    const view = (await request(s.url).get(`${RBAC}/clusterroles/view`).expect(200)).body;
    const resources = view.rules.flatMap((r: { resources: string[] }) => r.resources);
    assert.ok(resources.includes('configmaps'));
    assert.ok(!resources.includes('pods'));
    const admin = (await request(s.url).get(`${RBAC}/clusterroles/admin`).expect(200)).body;
    const adminResources = admin.rules.flatMap((r: { resources: string[] }) => r.resources);
    for (const r of ['configmaps', 'secrets', 'roles', 'rolebindings', 'localsubjectaccessreviews']) assert.ok(adminResources.includes(r), r);
  });

  it('anonymous reaches /healthz and /version but not /api; the tenant\'s members (only) reach discovery', async () => {
    const anon = ['system:unauthenticated'];
    assert.equal((await sar('system:anonymous', anon, { verb: 'get', path: '/healthz' })).allowed, true);
    assert.equal((await sar('system:anonymous', anon, { verb: 'get', path: '/version' })).allowed, true);
    assert.equal((await sar('system:anonymous', anon, { verb: 'get', path: '/api' })).allowed, false);
    // Bindings to system:authenticated grant the tenant's members only: bob is one once some binding names him.
    assert.equal((await sar('bob', ['system:authenticated'], { verb: 'get', path: '/apis/apps' })).allowed, false);
    assert.equal((await sar('bob', ['system:authenticated'], { verb: 'get', path: '/healthz' })).allowed, true);
    await create(`${RBAC}/namespaces/team/rolebindings`, { metadata: { name: 'bob-view' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'bob' }] });
    const d = await sar('bob', ['system:authenticated'], { verb: 'get', path: '/apis/apps' });
    assert.equal(d.allowed, true);
    assert.equal(d.reason, 'RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole "system:discovery" to Group "system:authenticated"');
  });

  it('system:masters is allowed everything with an empty reason', async () => {
    const d = await sar('root', ['system:masters'], { verb: 'delete', resource: 'secrets', namespace: 'x' });
    assert.deepEqual(d, { allowed: true });
  });

  it('a RoleBinding grants a Role only in its namespace, per verb and resourceName', async () => {
    await create(`${RBAC}/namespaces/team/roles`, {
      metadata: { name: 'cm-reader' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'watch'], resourceNames: ['app'] }, { apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }],
    });
    await create(`${RBAC}/namespaces/team/rolebindings`, {
      metadata: { name: 'alice-cm' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-reader' },
      subjects: [{ kind: 'User', name: 'alice' }],
    });
    const a = (x: Attrs) => sar('alice', ['system:authenticated'], x);
    const got = await a({ verb: 'get', resource: 'configmaps', namespace: 'team', name: 'app' });
    assert.equal(got.allowed, true);
    assert.equal(got.reason, 'RBAC: allowed by RoleBinding "alice-cm/team" of Role "cm-reader" to User "alice"');
    assert.equal((await a({ verb: 'watch', resource: 'configmaps', namespace: 'team', name: 'app' })).allowed, true);
    assert.equal((await a({ verb: 'get', resource: 'configmaps', namespace: 'team', name: 'other' })).allowed, false);
    assert.equal((await a({ verb: 'list', resource: 'configmaps', namespace: 'team' })).allowed, true);
    assert.equal((await a({ verb: 'delete', resource: 'configmaps', namespace: 'team', name: 'app' })).allowed, false);
    assert.equal((await a({ verb: 'list', resource: 'configmaps', namespace: 'default' })).allowed, false);
    assert.equal((await a({ verb: 'list', resource: 'configmaps' })).allowed, false);
    assert.equal((await a({ verb: 'list', resource: 'configmaps', namespace: 'team' }, )).allowed, true);
    // The same RBAC objects do not exist in another tenant.
    assert.equal((await sar('alice', [], { verb: 'list', resource: 'configmaps', namespace: 'team' }, '/clusters/acme')).allowed, false);
  });

  it('subresources, */subresource, wildcards and deletecollection', async () => {
    await create(`${RBAC}/clusterroles`, {
      metadata: { name: 'mixed' },
      rules: [
        { apiGroups: [''], resources: ['namespaces/status'], verbs: ['get'] },
        { apiGroups: ['*'], resources: ['*/scale'], verbs: ['update'] },
        { apiGroups: ['apps'], resources: ['*'], verbs: ['deletecollection'] },
        { nonResourceURLs: ['/logs/*', '/metrics'], verbs: ['get'] },
      ],
    });
    await create(`${RBAC}/clusterrolebindings`, {
      metadata: { name: 'ops-mixed' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'mixed' },
      subjects: [{ kind: 'Group', name: 'ops' }],
    });
    const o = (x: Attrs) => sar('carol', ['ops'], x);
    assert.equal((await o({ verb: 'get', resource: 'namespaces', subresource: 'status', name: 'team' })).allowed, true);
    assert.equal((await o({ verb: 'get', resource: 'namespaces', name: 'team' })).allowed, false);
    assert.equal((await o({ verb: 'update', resource: 'deployments', group: 'apps', subresource: 'scale', namespace: 'x', name: 'd' })).allowed, true);
    assert.equal((await o({ verb: 'update', resource: 'deployments', group: 'apps', namespace: 'x', name: 'd' })).allowed, false);
    assert.equal((await o({ verb: 'deletecollection', resource: 'replicasets', group: 'apps', namespace: 'x' })).allowed, true);
    assert.equal((await o({ verb: 'deletecollection', resource: 'replicasets', group: 'batch', namespace: 'x' })).allowed, false);
    assert.equal((await o({ verb: 'get', path: '/logs/a/b' })).allowed, true);
    assert.equal((await o({ verb: 'get', path: '/metrics' })).allowed, true);
    assert.equal((await o({ verb: 'get', path: '/metrics/slis' })).allowed, false);
    assert.equal((await o({ verb: 'post', path: '/metrics' })).allowed, false);
  });

  it('ServiceAccount subjects default to the binding namespace; missing roles are reported', async () => {
    await create(`${RBAC}/namespaces/team/rolebindings`, {
      metadata: { name: 'sa-view' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ kind: 'ServiceAccount', name: 'ci' }],
    });
    const sa = 'system:serviceaccount:team:ci';
    assert.equal((await sar(sa, [], { verb: 'list', resource: 'configmaps', namespace: 'team' })).allowed, true);
    assert.equal((await sar('system:serviceaccount:other:ci', [], { verb: 'list', resource: 'configmaps', namespace: 'team' })).allowed, false);
    await create(`${RBAC}/namespaces/team/rolebindings`, {
      metadata: { name: 'dangling' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'nope' },
      subjects: [{ kind: 'User', name: 'dave' }],
    });
    const d = await sar('dave', [], { verb: 'get', resource: 'secrets', namespace: 'team' });
    assert.deepEqual(d, { allowed: false, reason: 'RBAC: role.rbac.authorization.k8s.io "nope" not found' });
  });

  it('a ClusterRole labelled aggregate-to-view reaches view, edit and admin (CRD kinds join this way)', async () => {
    await create(`${RBAC}/clusterroles`, {
      metadata: { name: 'widgets-view', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } },
      rules: [{ apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get', 'list', 'watch'] }],
    });
    await create(`${RBAC}/namespaces/team/rolebindings`, {
      metadata: { name: 'erin-admin' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
      subjects: [{ kind: 'User', name: 'erin' }],
    });
    const attrs = { verb: 'list', resource: 'widgets', group: 'example.com', namespace: 'team' };
    await eventually(async () => (await sar('erin', [], attrs)).allowed === true, { timeoutMs: 5000, message: 'erin allowed through the aggregated role' });
    const edit = (await request(s.url).get(`${RBAC}/clusterroles/edit`).expect(200)).body;
    assert.ok(edit.rules.some((r: { resources: string[] }) => r.resources.includes('widgets')));
  });

  it('validates reviews as upstream', async () => {
    const res = await request(s.url)
      .post(`${AUTHZ}/subjectaccessreviews`)
      .send({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } })
      .expect(422);
    assert.equal(res.body.message, 'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified');
    const lsar = await request(s.url)
      .post(`/apis/authorization.k8s.io/v1/namespaces/team/localsubjectaccessreviews`)
      .send({ apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', spec: { user: 'alice', resourceAttributes: { verb: 'list', resource: 'configmaps', namespace: 'team' } } })
      .expect(201);
    assert.equal(lsar.body.status.allowed, true);
    const bad = await request(s.url)
      .post(`/apis/authorization.k8s.io/v1/namespaces/team/localsubjectaccessreviews`)
      .send({ apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', spec: { user: 'alice', resourceAttributes: { verb: 'list', resource: 'configmaps', namespace: 'other' } } })
      .expect(400);
    assert.equal(bad.body.message, 'spec.resourceAttributes.namespace must match namespace: team');
  });
});
