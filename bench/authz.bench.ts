import { performance } from 'node:perf_hooks';
import type { AuthorizationAttributes } from '@plinth/apimachinery';
import { RbacAuthorizer } from '../apps/api/src/authz/rbac-authorizer.js';
import { CLUSTER_ROLE_BINDINGS, CLUSTER_ROLES, ROLE_BINDINGS, ROLES, TenantRbacIndex } from '../apps/api/src/authz/rbac-index.js';
import { BOOTSTRAP_CLUSTER_ROLE_BINDINGS, BOOTSTRAP_CLUSTER_ROLES } from '../apps/api/src/kinds/rbac/bootstrap-policy.js';
import { progress, runBenchmark } from './bench-support.js';

const BINDINGS = 10_000;
const NAMESPACES = 1_000;
const CHECKS = Number(process.env.BENCH_CHECKS ?? 200_000);

/**
 * A tenant's index with the default policy and `BINDINGS` RoleBindings (ten
 * per namespace, one user each), or with `sharedGroup` `BINDINGS`
 * ClusterRoleBindings of one group to `view`.
 */
function buildTenant(sharedGroup: boolean): TenantRbacIndex {
  const idx = new TenantRbacIndex();
  for (const r of BOOTSTRAP_CLUSTER_ROLES) idx.put(CLUSTER_ROLES, { metadata: { name: r.name }, rules: r.rules });
  idx.put(CLUSTER_ROLES, { metadata: { name: 'view' }, rules: BOOTSTRAP_CLUSTER_ROLES.find((r) => r.name === 'system:aggregate-to-view')!.rules });
  for (const b of BOOTSTRAP_CLUSTER_ROLE_BINDINGS) {
    idx.put(CLUSTER_ROLE_BINDINGS, { metadata: { name: b.name }, roleRef: { kind: 'ClusterRole', name: b.role }, subjects: b.groups.map((name) => ({ kind: 'Group', name })) });
  }
  for (let n = 0; n < NAMESPACES; n++) {
    idx.put(ROLES, { metadata: { name: 'app', namespace: `ns-${n}` }, rules: [{ apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['get', 'list', 'watch'] }] });
  }
  for (let i = 0; i < BINDINGS; i++) {
    const namespace = `ns-${i % NAMESPACES}`;
    if (sharedGroup) {
      // Every binding applies to every user of the group: a check visits all of them.
      idx.put(CLUSTER_ROLE_BINDINGS, { metadata: { name: `b-${i}` }, roleRef: { kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'Group', name: 'everyone' }] });
      continue;
    }
    idx.put(ROLE_BINDINGS, { metadata: { name: `b-${i}`, namespace }, roleRef: { kind: i % 2 ? 'Role' : 'ClusterRole', name: i % 2 ? 'app' : 'view' }, subjects: [{ kind: 'User', name: `user-${i}` }] });
  }
  return idx;
}

function attrs(username: string, groups: string[], verb: string, namespace: string): AuthorizationAttributes {
  return { user: { username, groups }, tenant: 't', verb, resourceRequest: true, apiGroup: '', apiVersion: 'v1', resource: 'configmaps', subresource: '', namespace, name: '', path: '' };
}

/** Nanoseconds per authorize() call over `CHECKS` calls (after a warm-up). */
function measure(authorizer: RbacAuthorizer, a: AuthorizationAttributes, expectAllowed: boolean): number {
  for (let i = 0; i < 10_000; i++) authorizer.authorize(a);
  const first = authorizer.authorize(a) as { allowed: boolean };
  if (first.allowed !== expectAllowed) throw new Error(`unexpected decision for ${a.user.username}: ${JSON.stringify(first)}`);
  const start = performance.now();
  for (let i = 0; i < CHECKS; i++) authorizer.authorize(a);
  return ((performance.now() - start) * 1e6) / CHECKS;
}

/**
 * The cost of one RBAC authorization check in a tenant with 10,000
 * RoleBindings (and upstream's default policy), on the request path's
 * synchronous fast path (index loaded): allowed by a RoleBinding, allowed
 * by a ClusterRoleBinding (discovery), denied, and the worst case of
 * 10,000 ClusterRoleBindings that all name one group the user is in. Also the time to
 * build the index and its heap size.
 */
async function main(): Promise<void> {
  const before = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const idx = buildTenant(false);
  const buildMs = performance.now() - t0;
  globalThis.gc?.();
  const heapMiB = (process.memoryUsage().heapUsed - before) / 1024 / 1024;
  const authorizer = new RbacAuthorizer({ peek: () => idx, get: async () => idx });
  const authn = ['system:authenticated'];
  const rows: [string, number][] = [
    ['allowed by a RoleBinding (user-4321 in ns-321)', measure(authorizer, attrs('user-4321', authn, 'list', 'ns-321'), true)],
    ['denied (user-4321 in ns-322)', measure(authorizer, attrs('user-4321', authn, 'list', 'ns-322'), false)],
    ['allowed by a ClusterRoleBinding (discovery path, a member)', measure(authorizer, { ...attrs('user-4321', authn, 'get', ''), resourceRequest: false, path: '/apis/apps/v1' }, true)],
    ['denied: not a member of the tenant (discovery path)', measure(authorizer, { ...attrs('stranger', authn, 'get', ''), resourceRequest: false, path: '/apis/apps/v1' }, false)],
    ['system:masters (privileged group)', measure(authorizer, attrs('admin', ['system:masters'], 'delete', 'ns-1'), true)],
  ];
  const shared = buildTenant(true);
  const worst = new RbacAuthorizer({ peek: () => shared, get: async () => shared });
  rows.push(['worst case: 10,000 ClusterRoleBindings to the user\'s group, denied', measure(worst, attrs('u', ['everyone', ...authn], 'delete', 'ns-7'), false)]);
  progress(`index of ${BINDINGS} RoleBindings, ${NAMESPACES} Roles and the default policy built in ${buildMs.toFixed(0)} ms, ~${heapMiB.toFixed(1)} MiB heap`);
  for (const [name, ns] of rows) console.log(`${name.padEnd(62)} ${(ns / 1000).toFixed(2).padStart(8)} µs/check  ${Math.round(1e9 / ns).toLocaleString('en-US').padStart(12)} checks/s`);
}

runBenchmark(main);
