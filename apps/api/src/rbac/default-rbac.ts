import { isDeepStrictEqual } from 'node:util';
import type { Storage } from '@plinth/storage';
import { covers } from '../kinds/rbac/policy-covers.js';
import { type PolicyRule, rulesOf } from '../kinds/rbac/policy-rule.js';
import { ApiError, isPlainObject, type KubeObject } from '@plinth/apimachinery';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import type { WriteContext } from '../resource-store/write-context.js';
import {
  AUTOUPDATE_ANNOTATION,
  BOOTSTRAP_CLUSTER_ROLE_BINDINGS,
  BOOTSTRAP_CLUSTER_ROLES,
  BOOTSTRAP_LABEL,
  type BootstrapClusterRole,
  servedRules,
} from '../kinds/rbac/bootstrap-policy.js';
import { aggregationUpdates } from '../kinds/rbac/cluster-role-aggregation.js';
import { clusterRoleBindingResource, clusterRoleResource } from '../kinds/rbac/rbac.resources.js';
import { RBAC_API_GROUP } from '../kinds/rbac/rbac.validation.js';

/** What bootstrapping and aggregation need. */
export interface DefaultRbacDeps {
  registry: ResourceRegistry;
  store: ResourceStoreService;
  lists: Storage;
}

/** The identity of the server's own RBAC writes (a privileged group: no escalation check). */
const SYSTEM_USER = { username: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] };
const MAX_AGGREGATION_PASSES = 10;

function writeContext(tenant: string, def: typeof clusterRoleResource, verb: 'CreateOptions' | 'UpdateOptions'): WriteContext {
  return { tenant, def, namespace: '', subresource: '', user: SYSTEM_USER, dryRun: false, options: { kind: verb, apiVersion: 'meta.k8s.io/v1' }, warnings: [] };
}

function ruleJson(r: PolicyRule): Record<string, unknown> {
  const out: Record<string, unknown> = { verbs: r.verbs };
  if (r.apiGroups.length > 0) out.apiGroups = r.apiGroups;
  if (r.resources.length > 0) out.resources = r.resources;
  if (r.resourceNames.length > 0) out.resourceNames = r.resourceNames;
  if (r.nonResourceURLs.length > 0) out.nonResourceURLs = r.nonResourceURLs;
  return out;
}

function servedBy(registry: ResourceRegistry, tenant: string): (group: string, resource: string, sub: string) => boolean {
  return (group, resource, sub) => {
    const def = registry.all(tenant).find((d) => d.group === group && d.resource === resource);
    return !!def && (sub === '' || def.subresources.some((s) => s.name === sub));
  };
}

function clusterRoleObject(role: BootstrapClusterRole, rules: PolicyRule[]): KubeObject {
  const obj: KubeObject = {
    apiVersion: `${RBAC_API_GROUP}/v1`,
    kind: 'ClusterRole',
    metadata: { name: role.name, labels: { ...BOOTSTRAP_LABEL, ...role.labels }, annotations: { [AUTOUPDATE_ANNOTATION]: 'true' } },
  };
  if (role.aggregateFrom) obj.aggregationRule = { clusterRoleSelectors: role.aggregateFrom.map((matchLabels) => ({ matchLabels })) };
  else obj.rules = rules.map(ruleJson);
  return obj;
}

async function createIfMissing(deps: DefaultRbacDeps, ctx: WriteContext, obj: KubeObject): Promise<boolean> {
  try {
    await deps.store.create(ctx, obj);
    return true;
  } catch (err) {
    if (err instanceof ApiError && err.code === 409) return false;
    throw err;
  }
}

/** What upstream's reconciliation would change in an autoupdated default ClusterRole (labels, aggregationRule, missing rules); nothing is removed. Pure. */
function reconciled(cur: KubeObject, role: BootstrapClusterRole, rules: PolicyRule[]): KubeObject | undefined {
  if (cur.metadata.annotations?.[AUTOUPDATE_ANNOTATION] === 'false') return undefined;
  const next = structuredClone(cur);
  next.metadata.labels = { ...cur.metadata.labels, ...BOOTSTRAP_LABEL, ...role.labels };
  if (role.aggregateFrom) {
    if (!isPlainObject(next.aggregationRule)) next.aggregationRule = { clusterRoleSelectors: role.aggregateFrom.map((matchLabels) => ({ matchLabels })) };
  } else {
    const missing = rules.filter((r) => !covers(rulesOf(cur), [r]).covered);
    if (missing.length > 0) next.rules = [...(Array.isArray(cur.rules) ? cur.rules : []), ...missing.map(ruleJson)];
  }
  return isDeepStrictEqual(next, cur) ? undefined : next;
}

async function listNames(deps: DefaultRbacDeps, tenant: string, resource: string): Promise<Map<string, KubeObject>> {
  const { items } = await deps.lists.list({ tenant, resource });
  return new Map(items.map((i) => [String((i.body.metadata as { name?: string }).name), i.body as KubeObject]));
}

/**
 * Bootstraps upstream's default RBAC policy in `tenant`: the default
 * ClusterRoles (cluster-admin, admin/edit/view aggregated through the
 * aggregate-to-* labels, system:discovery, system:basic-user,
 * system:public-info-viewer, ...) with the rules for the kinds the tenant
 * serves, and their ClusterRoleBindings; existing autoupdated default roles
 * get missing rules and labels added. Then aggregates. Idempotent, safe from
 * several replicas at once; costs two lists when nothing is missing. A
 * no-op in a tenant that does not serve RBAC (the platform scope). Returns
 * the objects it created.
 */
export async function ensureDefaultRbac(deps: DefaultRbacDeps, tenant: string): Promise<string[]> {
  await deps.registry.prepare(tenant);
  if (!deps.registry.lookup(tenant, RBAC_API_GROUP, 'v1', 'clusterroles')) return [];
  const serves = servedBy(deps.registry, tenant);
  const created: string[] = [];
  const roles = await listNames(deps, tenant, clusterRoleResource.storageResource);
  const bindings = await listNames(deps, tenant, clusterRoleBindingResource.storageResource);
  const missing = preAggregated(
    roles,
    BOOTSTRAP_CLUSTER_ROLES.filter((role) => !roles.has(role.name)).map((role) => clusterRoleObject(role, servedRules(role.rules, serves))),
  );
  // Independent writes go out together: each waits for this replica's change stream (read-your-writes), so in sequence they would add up.
  await Promise.all(
    BOOTSTRAP_CLUSTER_ROLES.map(async (role) => {
      const rules = servedRules(role.rules, serves);
      const cur = roles.get(role.name);
      if (!cur) {
        if (await createIfMissing(deps, writeContext(tenant, clusterRoleResource, 'CreateOptions'), missing.get(role.name)!)) created.push(`clusterrole/${role.name}`);
        return;
      }
      if (!reconciled(cur, role, rules)) return;
      await deps.store.update(writeContext(tenant, clusterRoleResource, 'UpdateOptions'), role.name, (latest) => reconciled(latest, role, rules) ?? latest);
    }),
  );
  await Promise.all(
    BOOTSTRAP_CLUSTER_ROLE_BINDINGS.filter((b) => !bindings.has(b.name)).map(async (b) => {
      const subjects = b.groups.map((name) => ({ apiGroup: RBAC_API_GROUP, kind: 'Group', name }));
      const obj: KubeObject = {
        apiVersion: `${RBAC_API_GROUP}/v1`,
        kind: 'ClusterRoleBinding',
        metadata: { name: b.name, labels: { ...BOOTSTRAP_LABEL }, annotations: { [AUTOUPDATE_ANNOTATION]: 'true' } },
        roleRef: { apiGroup: RBAC_API_GROUP, kind: 'ClusterRole', name: b.role },
        subjects,
      };
      if (await createIfMissing(deps, writeContext(tenant, clusterRoleBindingResource, 'CreateOptions'), obj)) created.push(`clusterrolebinding/${b.name}`);
    }),
  );
  await aggregateClusterRoles(deps, tenant);
  return created;
}

/**
 * The default ClusterRoles about to be created (`toCreate`), with the rules
 * of those that aggregate others already filled in from the roles that
 * exist and those about to be (repeating for roles aggregated into
 * aggregated roles), so that a new tenant's `admin`, `edit` and `view` are
 * written once, complete, instead of created empty and then updated by
 * aggregation: the same objects, half the writes and change history. Roles
 * that exist are left to {@link aggregateClusterRoles}. Pure; by name.
 */
function preAggregated(existing: Map<string, KubeObject>, toCreate: KubeObject[]): Map<string, KubeObject> {
  const byName = new Map(toCreate.map((o) => [o.metadata.name!, o]));
  for (let pass = 0; pass < MAX_AGGREGATION_PASSES; pass++) {
    const updates = aggregationUpdates([...existing.values(), ...byName.values()]).filter((u) => byName.has(u.name));
    if (updates.length === 0) break;
    for (const u of updates) byName.set(u.name, { ...byName.get(u.name)!, rules: u.rules });
  }
  return byName;
}

/**
 * Brings every aggregated ClusterRole of `tenant` up to date with the
 * ClusterRoles its selectors match (repeating for roles aggregated into
 * aggregated roles). Safe to run concurrently: conditional updates, and a
 * conflict only means another pass wrote first, so the next pass re-reads.
 * Returns how many updates it wrote.
 */
export async function aggregateClusterRoles(deps: DefaultRbacDeps, tenant: string): Promise<number> {
  let written = 0;
  for (let pass = 0; pass < MAX_AGGREGATION_PASSES; pass++) {
    const { items } = await deps.lists.list({ tenant, resource: clusterRoleResource.storageResource });
    const updates = aggregationUpdates(items.map((i) => i.body));
    if (updates.length === 0) return written;
    await Promise.all(
      updates.map(async (u) => {
        try {
          await deps.store.update(writeContext(tenant, clusterRoleResource, 'UpdateOptions'), u.name, (cur) => ({ ...cur, rules: u.rules }));
          written++;
        } catch (err) {
          // Gone, or written meanwhile by another pass (this replica's aggregator, another replica): the next pass re-reads.
          if (!(err instanceof ApiError && (err.code === 404 || err.code === 409))) throw err;
        }
      }),
    );
  }
  return written;
}
