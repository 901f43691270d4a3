import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AuthorizationAttributes } from '@plinth/apimachinery';
import { rbacDecision, tenantDecision } from './rbac-authorizer.js';
import { CLUSTER_ROLE_BINDINGS, CLUSTER_ROLES, ROLE_BINDINGS, ROLES, TenantRbacIndex } from './rbac-index.js';

const attrs = (username: string, groups: string[], verb: string, resource: string, namespace = ''): AuthorizationAttributes => ({
  user: { username, groups },
  tenant: 't',
  verb,
  resourceRequest: true,
  apiGroup: '',
  apiVersion: 'v1',
  resource,
  subresource: '',
  namespace,
  name: '',
  path: '',
});

const binding = (name: string, namespace: string, roleKind: string, role: string, subjects: object[]) => ({
  metadata: { name, namespace },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name: role },
  subjects,
});

describe('TenantRbacIndex', () => {
  it('counts members: named users and own groups of any binding, never the groups everyone has; a removed binding ends membership', () => {
    const idx = new TenantRbacIndex();
    idx.put(CLUSTER_ROLES, { metadata: { name: 'reader' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] });
    idx.put(CLUSTER_ROLE_BINDINGS, binding('everyone', '', 'ClusterRole', 'reader', [{ kind: 'Group', name: 'system:authenticated' }]));
    assert.equal(idx.hasMember({ username: 'x', groups: ['system:authenticated'] }), false);
    // Bindings to everyone grant members only.
    assert.equal(tenantDecision(idx, attrs('x', ['system:authenticated'], 'get', 'configmaps', 'ns')).allowed, false);
    idx.put(ROLE_BINDINGS, binding('a', 'ns', 'ClusterRole', 'reader', [{ kind: 'Group', name: 'devs' }]));
    idx.put(ROLE_BINDINGS, binding('b', 'other', 'ClusterRole', 'reader', [{ kind: 'Group', name: 'devs' }]));
    assert.equal(idx.hasMember({ username: 'x', groups: ['devs', 'system:authenticated'] }), true);
    assert.equal(tenantDecision(idx, attrs('x', ['devs', 'system:authenticated'], 'get', 'configmaps', 'elsewhere')).allowed, true);
    idx.remove(ROLE_BINDINGS, 'ns', 'a');
    assert.equal(idx.hasMember({ username: 'x', groups: ['devs'] }), true, 'still named by binding b');
    idx.remove(ROLE_BINDINGS, 'other', 'b');
    assert.equal(idx.hasMember({ username: 'x', groups: ['devs'] }), false);
    // An identity issued for the tenant is a member without any binding.
    const issued = { ...attrs('system:serviceaccount:ns:ci', ['system:authenticated'], 'get', 'configmaps', 'ns'), user: { username: 'system:serviceaccount:ns:ci', groups: ['system:authenticated'], extra: { 'tenancy.plinth.dev/tenant': ['t'] } } };
    assert.equal(tenantDecision(idx, issued).allowed, true);
  });


  it('finds bindings by user, group and ServiceAccount, and forgets removed or changed ones', () => {
    const idx = new TenantRbacIndex();
    idx.put(CLUSTER_ROLES, { metadata: { name: 'reader' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] });
    idx.put(CLUSTER_ROLE_BINDINGS, binding('by-group', '', 'ClusterRole', 'reader', [{ kind: 'Group', name: 'devs' }]));
    idx.put(ROLE_BINDINGS, binding('by-sa', 'ns', 'ClusterRole', 'reader', [{ kind: 'ServiceAccount', name: 'ci' }]));
    assert.equal(rbacDecision(idx, attrs('x', ['devs'], 'get', 'configmaps', 'any')).allowed, true);
    assert.equal(rbacDecision(idx, attrs('system:serviceaccount:ns:ci', [], 'get', 'configmaps', 'ns')).allowed, true);
    assert.equal(rbacDecision(idx, attrs('system:serviceaccount:ns:ci', [], 'get', 'configmaps', 'other')).allowed, false);
    idx.put(CLUSTER_ROLE_BINDINGS, binding('by-group', '', 'ClusterRole', 'reader', [{ kind: 'Group', name: 'ops' }]));
    assert.equal(rbacDecision(idx, attrs('x', ['devs'], 'get', 'configmaps', 'any')).allowed, false);
    assert.equal(rbacDecision(idx, attrs('x', ['ops'], 'get', 'configmaps', 'any')).allowed, true);
    idx.remove(CLUSTER_ROLE_BINDINGS, '', 'by-group');
    assert.equal(rbacDecision(idx, attrs('x', ['ops'], 'get', 'configmaps', 'any')).allowed, false);
  });

  it('a ServiceAccount subject of a cluster binding needs a namespace', () => {
    const idx = new TenantRbacIndex();
    idx.put(CLUSTER_ROLES, { metadata: { name: 'all' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] });
    idx.put(CLUSTER_ROLE_BINDINGS, binding('b', '', 'ClusterRole', 'all', [{ kind: 'ServiceAccount', name: 'ci' }]));
    assert.equal(rbacDecision(idx, attrs('system:serviceaccount::ci', [], 'get', 'x')).allowed, false);
  });

  it('reports missing roles like upstream, aggregated when several', () => {
    const idx = new TenantRbacIndex();
    idx.put(ROLE_BINDINGS, binding('a', 'ns', 'Role', 'gone', [{ kind: 'User', name: 'u' }]));
    idx.put(CLUSTER_ROLE_BINDINGS, binding('b', '', 'ClusterRole', 'gone', [{ kind: 'User', name: 'u' }]));
    assert.deepEqual(rbacDecision(idx, attrs('u', [], 'get', 'x', 'ns')), {
      allowed: false,
      noOpinion: true,
      reason: 'RBAC: [clusterrole.rbac.authorization.k8s.io "gone" not found, role.rbac.authorization.k8s.io "gone" not found]',
    });
    idx.put(ROLES, { metadata: { name: 'gone', namespace: 'ns' }, rules: [{ apiGroups: [''], resources: ['x'], verbs: ['get'] }] });
    assert.equal(rbacDecision(idx, attrs('u', [], 'get', 'x', 'ns')).reason, 'RBAC: allowed by RoleBinding "a/ns" of Role "gone" to User "u"');
  });

  it('rulesFor lists cluster rules, then the namespace rules', () => {
    const idx = new TenantRbacIndex();
    idx.put(CLUSTER_ROLES, { metadata: { name: 'c' }, rules: [{ nonResourceURLs: ['/x'], verbs: ['get'] }] });
    idx.put(ROLES, { metadata: { name: 'r', namespace: 'ns' }, rules: [{ apiGroups: [''], resources: ['y'], verbs: ['list'] }] });
    idx.put(CLUSTER_ROLE_BINDINGS, binding('cb', '', 'ClusterRole', 'c', [{ kind: 'User', name: 'u' }]));
    idx.put(ROLE_BINDINGS, binding('rb', 'ns', 'Role', 'r', [{ kind: 'User', name: 'u' }]));
    const { rules } = idx.rulesFor({ username: 'u', groups: [] }, 'ns');
    assert.deepEqual(rules.map((r) => [...r.nonResourceURLs, ...r.resources]), [['/x'], ['y']]);
    assert.equal(idx.rulesFor({ username: 'u', groups: [] }, '').rules.length, 1);
  });
});

describe('tenantDecision over a changing index (decisions are remembered per index content)', () => {
  it('a revoked binding, a narrowed role and a removed role take effect on the next decision', () => {
    const idx = new TenantRbacIndex();
    const request = attrs('alice', ['system:authenticated'], 'create', 'configmaps', 'ns');
    idx.put(ROLES, { metadata: { name: 'writer', namespace: 'ns' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create'] }] });
    idx.put(ROLE_BINDINGS, binding('alice-writes', 'ns', 'Role', 'writer', [{ kind: 'User', name: 'alice' }]));
    assert.equal(tenantDecision(idx, request).allowed, true);
    assert.equal(tenantDecision(idx, request).allowed, true, 'the same request again');
    idx.remove(ROLE_BINDINGS, 'ns', 'alice-writes');
    assert.equal(tenantDecision(idx, request).allowed, false, 'the revoked binding no longer grants');
    idx.put(ROLE_BINDINGS, binding('alice-writes', 'ns', 'Role', 'writer', [{ kind: 'User', name: 'alice' }]));
    assert.equal(tenantDecision(idx, request).allowed, true, 'granted again once bound again');
    idx.put(ROLES, { metadata: { name: 'writer', namespace: 'ns' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] });
    assert.equal(tenantDecision(idx, request).allowed, false, 'the role no longer has the verb');
    idx.put(ROLES, { metadata: { name: 'writer', namespace: 'ns' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create'] }] });
    assert.equal(tenantDecision(idx, request).allowed, true);
    idx.remove(ROLES, 'ns', 'writer');
    const denied = tenantDecision(idx, request);
    assert.equal(denied.allowed, false);
    assert.equal(denied.reason, 'RBAC: role.rbac.authorization.k8s.io "writer" not found');
  });

  it('keeps the decisions of one tenant\'s index from answering for another', () => {
    const granting = new TenantRbacIndex();
    const other = new TenantRbacIndex();
    for (const idx of [granting, other]) {
      idx.put(ROLES, { metadata: { name: 'writer', namespace: 'ns' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create'] }] });
    }
    granting.put(ROLE_BINDINGS, binding('b', 'ns', 'Role', 'writer', [{ kind: 'User', name: 'carol' }]));
    other.put(ROLE_BINDINGS, binding('b', 'ns', 'Role', 'writer', [{ kind: 'User', name: 'dave' }]));
    const request = attrs('carol', ['system:authenticated'], 'create', 'configmaps', 'ns');
    assert.equal(tenantDecision(granting, request).allowed, true);
    assert.equal(tenantDecision(other, request).allowed, false);
  });

  it('tells apart requests that differ in any attribute the decision reads', () => {
    const idx = new TenantRbacIndex();
    idx.put(ROLES, { metadata: { name: 'one', namespace: 'ns' }, rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'], verbs: ['get'] }] });
    idx.put(ROLE_BINDINGS, binding('b', 'ns', 'Role', 'one', [{ kind: 'Group', name: 'devs' }]));
    const base = attrs('bob', ['devs'], 'get', 'configmaps', 'ns');
    assert.equal(tenantDecision(idx, { ...base, name: 'a' }).allowed, true);
    assert.equal(tenantDecision(idx, { ...base, name: 'b' }).allowed, false, 'another name');
    assert.equal(tenantDecision(idx, { ...base, name: 'a', verb: 'delete' }).allowed, false, 'another verb');
    assert.equal(tenantDecision(idx, { ...base, name: 'a', subresource: 'status' }).allowed, false, 'a subresource');
    assert.equal(tenantDecision(idx, { ...base, name: 'a', namespace: 'other' }).allowed, false, 'another namespace');
    assert.equal(tenantDecision(idx, { ...base, name: 'a', user: { username: 'bob', groups: ['ops'] } }).allowed, false, 'other groups');
    assert.equal(tenantDecision(idx, { ...base, name: 'a', apiGroup: 'apps' }).allowed, false, 'another group');
  });
});
