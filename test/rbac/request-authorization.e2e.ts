import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { anonymousIdentity, certificateIdentity, type ClientIdentity, requestAs } from '../support/credentials.js';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { grantClusterRole, grantInNamespace } from '../support/rbac.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';

/** What upstream's Forbidden Status for a resource request looks like. */
function forbidden(message: string, kind: string, name?: string): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'Forbidden', details: name ? { name, kind } : { kind }, code: 403 };
}

// Every request, from real identities over HTTPS, is authorized by RBAC inside the tenant it addresses.
describe('authorization of every request (RBAC on the request path)', { timeout: 120_000 }, () => {
  let s: TestServer;
  let jane: ClientIdentity;
  let alice: ClientIdentity;

  before(async () => {
    s = await startTestServer('rbac-requests', { PLINTH_TENANTS: 'globex' });
    jane = await certificateIdentity('jane', ['devs']);
    alice = await certificateIdentity('alice');
    for (const ns of ['team', 'other']) await request(s.url).post('/api/v1/namespaces').send({ metadata: { name: ns } }).expect(201);
    // A tenant owned by alice: its owners are cluster-admin inside it, and nowhere else.
    await request(s.url)
      .post(TENANTS)
      .send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'acme' }, spec: { owners: [{ kind: 'User', name: 'alice' }] } })
      .expect(201);
  });
  after(async () => s?.close());

  it('anonymous requests reach the public health and version paths only, with upstream\'s 403 elsewhere', async () => {
    const anon = requestAs(s.url, anonymousIdentity());
    await anon.get('/healthz').expect(200);
    await anon.get('/version').expect(200);
    const api = await anon.get('/api').expect(403);
    assert.equal(api.body.message, 'forbidden: User "system:anonymous" cannot get path "/api"');
    const list = await anon.get('/api/v1/namespaces/default/configmaps').expect(403);
    assert.deepEqual(list.body, forbidden('configmaps is forbidden: User "system:anonymous" cannot list resource "configmaps" in API group "" in the namespace "default"', 'configmaps'));
  });

  it('an authenticated user who is no member of the tenant may ask who they are, and nothing else, not even discovery', async () => {
    const as = requestAs(s.url, jane);
    const api = await as.get('/api').expect(403);
    assert.equal(api.body.message, 'forbidden: User "jane" cannot get path "/api"');
    await as.get('/apis').expect(403);
    await as.get('/openapi/v2').expect(403);
    await as.get('/version').expect(200);
    const who = await as.post('/apis/authentication.k8s.io/v1/selfsubjectreviews').send({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }).expect(201);
    assert.equal(who.body.status.userInfo.username, 'jane');
    const get = await as.get('/api/v1/namespaces/team/configmaps/x').expect(403);
    assert.deepEqual(get.body, forbidden('configmaps "x" is forbidden: User "jane" cannot get resource "configmaps" in API group "" in the namespace "team"', 'configmaps', 'x'));
    await as.get('/api/v1/namespaces').expect(403);
    await as.post('/api/v1/namespaces/team/configmaps').send({ metadata: { name: 'x' } }).expect(403);
    const rules = await as.post('/apis/authorization.k8s.io/v1/selfsubjectrulesreviews').send({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: 'team' } }).expect(201);
    assert.deepEqual([rules.body.status.resourceRules, rules.body.status.nonResourceRules], [[], []]);
  });

  it('a RoleBinding grants its role in its namespace only, to the user or to a group the user is in', async () => {
    await grantInNamespace(s.url, 'team', 'devs-edit', 'edit', [{ kind: 'Group', name: 'devs' }]);
    // A binding anywhere in the tenant makes jane a member: the tenant's defaults for everyone (discovery) now apply to her.
    await requestAs(s.url, jane).get('/api').expect(200);
    const kc = writeTestKubeconfig(s.url, jane);
    const created = await kubectl(kc, ['create', 'configmap', 'c1', '-n', 'team', '--from-literal=a=b']);
    assert.equal(created.code, 0, created.stderr);
    const elsewhere = await kubectl(kc, ['create', 'configmap', 'c1', '-n', 'other', '--from-literal=a=b']);
    assert.notEqual(elsewhere.code, 0);
    assert.match(elsewhere.stderr, /configmaps is forbidden: User "jane" cannot create resource "configmaps" in API group "" in the namespace "other"/);
    // edit does not include RBAC: jane cannot read or grant roles in team.
    const rb = await requestAs(s.url, jane).get(`${RBAC}/namespaces/team/rolebindings`).expect(403);
    assert.match(rb.body.message, /rolebindings.rbac.authorization.k8s.io is forbidden: User "jane" cannot list resource "rolebindings"/);
    // Removing the binding removes the right at once (the index follows the change stream).
    await request(s.url).delete(`${RBAC}/namespaces/team/rolebindings/devs-edit`).expect(200);
    await requestAs(s.url, jane).get('/api/v1/namespaces/team/configmaps/c1').expect(403);
  });

  it('kubectl auth can-i answers for the caller and, for administrators, --as another user', async () => {
    await grantInNamespace(s.url, 'team', 'jane-view', 'view', [{ kind: 'User', name: 'jane' }]);
    const kc = writeTestKubeconfig(s.url, jane);
    const yes = await kubectl(kc, ['auth', 'can-i', 'list', 'configmaps', '-n', 'team']);
    assert.equal(yes.stdout.trim(), 'yes');
    const no = await kubectl(kc, ['auth', 'can-i', 'delete', 'configmaps', '-n', 'team']);
    assert.equal(no.stdout.trim(), 'no');
    const list = await kubectl(kc, ['auth', 'can-i', '--list', '-n', 'team']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /\nconfigmaps\s+\[\]\s+\[\]\s+\[get list watch\]\n/);
    const admin = writeTestKubeconfig(s.url);
    assert.equal((await kubectl(admin, ['auth', 'can-i', 'list', 'configmaps', '-n', 'team', '--as', 'jane'])).stdout.trim(), 'yes');
    assert.equal((await kubectl(admin, ['auth', 'can-i', 'list', 'configmaps', '-n', 'other', '--as', 'jane'])).stdout.trim(), 'no');
  });

  it('refuses to let a user grant more than they hold (escalation), over HTTP, with upstream\'s message', async () => {
    // admin in team includes RoleBindings, but not cluster-admin's rights.
    await grantInNamespace(s.url, 'team', 'alice-admin', 'admin', [{ kind: 'User', name: 'alice' }]);
    const as = requestAs(s.url, alice);
    const binding = (name: string, role: string) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'mallory' }],
    });
    await as.post(`${RBAC}/namespaces/team/rolebindings`).send(binding('mallory-edit', 'edit')).expect(201);
    const esc = await as.post(`${RBAC}/namespaces/team/rolebindings`).send(binding('mallory-root', 'cluster-admin')).expect(403);
    assert.equal(esc.body.reason, 'Forbidden');
    assert.match(esc.body.message, /^rolebindings.rbac.authorization.k8s.io "mallory-root" is forbidden: user "alice" \(groups=\["system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n/);
    await request(s.url).get(`${RBAC}/namespaces/team/rolebindings/mallory-root`).expect(404);
  });

  it('impersonation needs the impersonate verb on the user', async () => {
    const as = requestAs(s.url, jane);
    const refused = await as.get('/api/v1/namespaces/team/configmaps').set('Impersonate-User', 'bob').expect(403);
    assert.equal(refused.body.message, 'users "bob" is forbidden: User "jane" cannot impersonate resource "users" in API group "" at the cluster scope');
    await request(s.url)
      .post(`${RBAC}/clusterroles`)
      .send({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'impersonate-bob' }, rules: [{ apiGroups: [''], resources: ['users'], verbs: ['impersonate'], resourceNames: ['bob'] }] })
      .expect(201);
    await grantClusterRole(s.url, 'jane-impersonates-bob', 'impersonate-bob', [{ kind: 'User', name: 'jane' }]);
    await grantInNamespace(s.url, 'team', 'bob-view', 'view', [{ kind: 'User', name: 'bob' }]);
    await as.get('/api/v1/namespaces/team/configmaps').set('Impersonate-User', 'bob').expect(200);
    await as.get('/api/v1/namespaces/team/configmaps').set('Impersonate-User', 'carl').expect(403);
  });

  it('a tenant\'s owners administer it, and have no rights in other tenants or over tenants', async () => {
    const acme = writeTestKubeconfig(`${s.url}/clusters/acme`, alice);
    const ns = await kubectl(acme, ['create', 'namespace', 'apps']);
    assert.equal(ns.code, 0, ns.stderr);
    const rb = await kubectl(acme, ['create', 'rolebinding', 'jane-edit', '--clusterrole=edit', '--user=jane', '-n', 'apps']);
    assert.equal(rb.code, 0, rb.stderr);
    assert.equal((await kubectl(acme, ['auth', 'can-i', '*', '*'])).stdout.trim(), 'yes');
    // The grant inside acme gives jane nothing in the default tenant or in globex.
    await requestAs(s.url, jane).post('/clusters/acme/api/v1/namespaces/apps/configmaps').send({ metadata: { name: 'j' } }).expect(201);
    await requestAs(s.url, jane).get('/clusters/globex/api/v1/namespaces/apps/configmaps').expect(403);
    const globex = await requestAs(s.url, alice).get('/clusters/globex/api/v1/namespaces').expect(403);
    assert.match(globex.body.message, /User "alice" cannot list resource "namespaces"/);
    await requestAs(s.url, alice).get(TENANTS).expect(403);
    await requestAs(s.url, alice).delete(`${TENANTS}/acme`).expect(403);
  });
});
