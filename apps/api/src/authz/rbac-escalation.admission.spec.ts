import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AdmissionError, type AdmissionAttributes } from '@plinth/admission';
import { RbacAuthorizer } from './rbac-authorizer.js';
import { RbacEscalationModule } from './rbac-escalation.admission.js';
import { CLUSTER_ROLE_BINDINGS, CLUSTER_ROLES, ROLE_BINDINGS, ROLES, TenantRbacIndex } from './rbac-index.js';

const G = 'rbac.authorization.k8s.io';

function setup(): { idx: TenantRbacIndex; mod: RbacEscalationModule } {
  const idx = new TenantRbacIndex();
  const source = { peek: () => idx, get: async () => idx };
  return { idx, mod: new RbacEscalationModule(new RbacAuthorizer(source), source) };
}

function attrs(resource: string, object: Record<string, unknown>, user = 'alice', operation: 'CREATE' | 'UPDATE' = 'CREATE', oldObject: Record<string, unknown> | null = null): AdmissionAttributes {
  const namespaced = resource === 'roles' || resource === 'rolebindings';
  return {
    tenant: 't',
    user: { username: user, groups: ['system:authenticated'] },
    operation,
    kind: { group: G, version: 'v1', kind: 'X' },
    resource: { group: G, version: 'v1', resource },
    subresource: '',
    namespace: namespaced ? 'ns' : '',
    name: String((object.metadata as { name?: string }).name ?? ''),
    object,
    oldObject,
    options: null,
    dryRun: false,
    namespaced,
  };
}

async function rejection(p: Promise<void>): Promise<{ code: number; message: string }> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof AdmissionError);
    return { code: err.status.code, message: err.status.message };
  }
  assert.fail('expected a rejection');
}

const grant = (idx: TenantRbacIndex, name: string, rules: object[], namespace = 'ns') => {
  idx.put(ROLES, { metadata: { name, namespace }, rules });
  idx.put(ROLE_BINDINGS, { metadata: { name, namespace }, roleRef: { kind: 'Role', name }, subjects: [{ kind: 'User', name: 'alice' }] });
};

describe('RBACEscalation admission', () => {
  it('refuses a Role granting more than the user holds, listing what is missing as upstream', async () => {
    const { idx, mod } = setup();
    grant(idx, 'base', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }, { apiGroups: [G], resources: ['roles'], verbs: ['create'] }]);
    const role = { metadata: { name: 'r' }, rules: [{ apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['get'] }] };
    const r = await rejection(mod.admit(attrs('roles', role)));
    assert.equal(r.code, 403);
    assert.equal(
      r.message,
      'roles.rbac.authorization.k8s.io "r" is forbidden: user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}',
    );
    await mod.admit(attrs('roles', { metadata: { name: 'ok' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }] }));
  });

  it('lets a user with escalate on roles create any Role', async () => {
    const { idx, mod } = setup();
    grant(idx, 'esc', [{ apiGroups: [G], resources: ['roles'], verbs: ['escalate'] }]);
    await mod.admit(attrs('roles', { metadata: { name: 'r' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] }));
  });

  it('system:masters skips every check; GC-only updates are not checked', async () => {
    const { mod } = setup();
    const big = { metadata: { name: 'r' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] };
    await mod.admit({ ...attrs('clusterroles', big), user: { username: 'root', groups: ['system:masters'] } });
    await mod.admit(attrs('clusterroles', { ...big, metadata: { name: 'r', finalizers: ['x'] } }, 'alice', 'UPDATE', big));
  });

  it('an aggregationRule needs full authority (without escalate)', async () => {
    const { idx, mod } = setup();
    idx.put(CLUSTER_ROLES, { metadata: { name: 'cr-admin' }, rules: [{ apiGroups: [G], resources: ['clusterroles'], verbs: ['create', 'update'] }] });
    idx.put(CLUSTER_ROLE_BINDINGS, { metadata: { name: 'b' }, roleRef: { kind: 'ClusterRole', name: 'cr-admin' }, subjects: [{ kind: 'User', name: 'alice' }] });
    const r = await rejection(mod.admit(attrs('clusterroles', { metadata: { name: 'agg' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'b' } }] } })));
    assert.equal(r.message, 'clusterroles.rbac.authorization.k8s.io "agg" is forbidden: must have cluster-admin privileges to use the aggregationRule');
  });

  it('a binding needs the role held, or bind on it; a missing role is reported with the storage wording', async () => {
    const { idx, mod } = setup();
    grant(idx, 'base', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }]);
    idx.put(CLUSTER_ROLES, { metadata: { name: 'secrets' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] });
    const rb = (role: string, kind = 'ClusterRole') => ({ metadata: { name: 'rb' }, roleRef: { apiGroup: G, kind, name: role }, subjects: [{ kind: 'User', name: 'bob' }] });
    const denied = await rejection(mod.admit(attrs('rolebindings', rb('secrets'))));
    assert.equal(
      denied.message,
      'rolebindings.rbac.authorization.k8s.io "rb" is forbidden: user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}',
    );
    const missing = await rejection(mod.admit(attrs('rolebindings', rb('nope'))));
    assert.equal(missing.message, 'rolebindings.rbac.authorization.k8s.io "rb" is forbidden: clusterroles.rbac.authorization.k8s.io "nope" not found');
    await mod.admit(attrs('rolebindings', rb('base', 'Role')));
    grant(idx, 'binder', [{ apiGroups: [G], resources: ['clusterroles'], verbs: ['bind'], resourceNames: ['secrets'] }]);
    await mod.admit(attrs('rolebindings', rb('secrets')));
    await rejection(mod.admit(attrs('clusterrolebindings', rb('secrets'))));
  });
});
