import type { PolicyRule } from './policy-rule.js';
import { RBAC_API_GROUP } from './rbac.validation.js';

/** Label upstream puts on every bootstrapped RBAC object. */
export const BOOTSTRAP_LABEL = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
/** Annotation marking a bootstrapped object the server keeps reconciled (`"false"` opts out). */
export const AUTOUPDATE_ANNOTATION = 'rbac.authorization.kubernetes.io/autoupdate';

/** A default ClusterRole, as upstream's bootstrap policy declares it. */
export interface BootstrapClusterRole {
  name: string;
  labels?: Record<string, string>;
  rules: PolicyRule[];
  /** Label selectors (matchLabels) of an aggregated role. */
  aggregateFrom?: Record<string, string>[];
}

/** A default ClusterRoleBinding. */
export interface BootstrapClusterRoleBinding {
  name: string;
  role: string;
  groups: string[];
}

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const ALL_RW = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

const r = (apiGroups: string[], resources: string[], verbs: string[]): PolicyRule => ({ apiGroups, resources, verbs, resourceNames: [], nonResourceURLs: [] });
const urls = (nonResourceURLs: string[], verbs: string[]): PolicyRule => ({ apiGroups: [], resources: [], verbs, resourceNames: [], nonResourceURLs });

const AGGREGATE_TO_ADMIN = 'rbac.authorization.k8s.io/aggregate-to-admin';
const AGGREGATE_TO_EDIT = 'rbac.authorization.k8s.io/aggregate-to-edit';
const AGGREGATE_TO_VIEW = 'rbac.authorization.k8s.io/aggregate-to-view';

/**
 * Upstream's default ClusterRoles (plugin/pkg/auth/authorizer/rbac/bootstrappolicy),
 * with every rule of the aggregate-to-* roles as upstream has them; rules
 * about kinds a tenant does not serve are dropped when bootstrapping (see
 * {@link servedRules}).
 */
export const BOOTSTRAP_CLUSTER_ROLES: BootstrapClusterRole[] = [
  { name: 'cluster-admin', rules: [r(['*'], ['*'], ['*']), urls(['*'], ['*'])] },
  { name: 'admin', rules: [], aggregateFrom: [{ [AGGREGATE_TO_ADMIN]: 'true' }] },
  { name: 'edit', labels: { [AGGREGATE_TO_ADMIN]: 'true' }, rules: [], aggregateFrom: [{ [AGGREGATE_TO_EDIT]: 'true' }] },
  { name: 'view', labels: { [AGGREGATE_TO_EDIT]: 'true' }, rules: [], aggregateFrom: [{ [AGGREGATE_TO_VIEW]: 'true' }] },
  {
    name: 'system:aggregate-to-admin',
    labels: { [AGGREGATE_TO_ADMIN]: 'true' },
    rules: [r(['authorization.k8s.io'], ['localsubjectaccessreviews'], ['create']), r([RBAC_API_GROUP], ['rolebindings', 'roles'], ALL_RW)],
  },
  {
    name: 'system:aggregate-to-edit',
    labels: { [AGGREGATE_TO_EDIT]: 'true' },
    rules: [
      r([''], ['pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy', 'secrets', 'services/proxy'], READ),
      r([''], ['serviceaccounts'], ['impersonate']),
      r([''], ['pods', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy'], WRITE),
      r([''], ['pods/eviction'], ['create']),
      r([''], ['configmaps', 'events', 'persistentvolumeclaims', 'replicationcontrollers', 'replicationcontrollers/scale', 'secrets', 'serviceaccounts', 'services', 'services/proxy'], WRITE),
      r([''], ['serviceaccounts/token'], ['create']),
      r(['apps'], ['daemonsets', 'deployments', 'deployments/rollback', 'deployments/scale', 'replicasets', 'replicasets/scale', 'statefulsets', 'statefulsets/scale'], WRITE),
      r(['autoscaling'], ['horizontalpodautoscalers'], WRITE),
      r(['batch'], ['cronjobs', 'jobs'], WRITE),
      r(['policy'], ['poddisruptionbudgets'], WRITE),
      r(['networking.k8s.io'], ['ingresses', 'networkpolicies'], WRITE),
      r(['coordination.k8s.io'], ['leases'], ALL_RW),
    ],
  },
  {
    name: 'system:aggregate-to-view',
    labels: { [AGGREGATE_TO_VIEW]: 'true' },
    rules: [
      r([''], ['configmaps', 'endpoints', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'pods', 'replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/status'], READ),
      r([''], ['bindings', 'events', 'limitranges', 'namespaces/status', 'pods/log', 'pods/status', 'replicationcontrollers/status', 'resourcequotas', 'resourcequotas/status'], READ),
      r([''], ['namespaces'], READ),
      r(['discovery.k8s.io'], ['endpointslices'], READ),
      r(['apps'], ['controllerrevisions', 'daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'replicasets', 'replicasets/scale', 'replicasets/status', 'statefulsets', 'statefulsets/scale', 'statefulsets/status'], READ),
      r(['autoscaling'], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status'], READ),
      r(['batch'], ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status'], READ),
      r(['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status'], READ),
      r(['networking.k8s.io'], ['ingresses', 'ingresses/status', 'networkpolicies'], READ),
    ],
  },
  { name: 'system:auth-delegator', rules: [r(['authentication.k8s.io'], ['tokenreviews'], ['create']), r(['authorization.k8s.io'], ['subjectaccessreviews'], ['create'])] },
  {
    name: 'system:basic-user',
    rules: [r(['authorization.k8s.io'], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'], ['create']), r(['authentication.k8s.io'], ['selfsubjectreviews'], ['create'])],
  },
  {
    name: 'system:discovery',
    rules: [urls(['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/'], ['get'])],
  },
  { name: 'system:monitoring', rules: [urls(['/healthz', '/healthz/*', '/livez', '/livez/*', '/metrics', '/metrics/slis', '/readyz', '/readyz/*'], ['get'])] },
  { name: 'system:public-info-viewer', rules: [urls(['/healthz', '/livez', '/readyz', '/version', '/version/'], ['get'])] },
  { name: 'system:service-account-issuer-discovery', rules: [urls(['/.well-known/openid-configuration', '/openid/v1/jwks'], ['get'])] },
];

/** Upstream's default ClusterRoleBindings (those meaningful without nodes and controllers). */
export const BOOTSTRAP_CLUSTER_ROLE_BINDINGS: BootstrapClusterRoleBinding[] = [
  { name: 'cluster-admin', role: 'cluster-admin', groups: ['system:masters'] },
  { name: 'system:basic-user', role: 'system:basic-user', groups: ['system:authenticated'] },
  { name: 'system:discovery', role: 'system:discovery', groups: ['system:authenticated'] },
  { name: 'system:monitoring', role: 'system:monitoring', groups: ['system:monitoring'] },
  { name: 'system:public-info-viewer', role: 'system:public-info-viewer', groups: ['system:authenticated', 'system:unauthenticated'] },
  { name: 'system:service-account-issuer-discovery', role: 'system:service-account-issuer-discovery', groups: ['system:serviceaccounts'] },
];

/**
 * `rules` restricted to what a tenant serves: a resource rule keeps only the
 * resources (`r` or `r/sub`) `serves(group, resource, subresource)` accepts,
 * and is dropped when none is left; `*` and non-resource rules are kept. Pure.
 */
export function servedRules(rules: PolicyRule[], serves: (group: string, resource: string, subresource: string) => boolean): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const rule of rules) {
    if (rule.nonResourceURLs.length > 0 || rule.apiGroups.includes('*') || rule.resources.includes('*')) {
      out.push(rule);
      continue;
    }
    const groups = rule.apiGroups.filter((g) => rule.resources.some((res) => servesResource(serves, g, res)));
    const resources = rule.resources.filter((res) => groups.some((g) => servesResource(serves, g, res)));
    if (groups.length > 0 && resources.length > 0) out.push({ ...rule, apiGroups: groups, resources });
  }
  return out;
}

function servesResource(serves: (group: string, resource: string, subresource: string) => boolean, group: string, res: string): boolean {
  const slash = res.indexOf('/');
  return slash < 0 ? serves(group, res, '') : serves(group, res.slice(0, slash), res.slice(slash + 1));
}
