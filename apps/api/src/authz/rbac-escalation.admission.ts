import type { AdmissionAttributes, AdmissionModule, AdmissionOperation, UserInfo } from '@plinth/admission';
import { AdmissionError } from '@plinth/admission';
import { onlyGarbageCollectionFieldsDiffer } from '../kinds/rbac/rbac.validation.js';
import type { AuthorizationAttributes } from '@plinth/apimachinery';
import { covers, describeMissing } from '../kinds/rbac/policy-covers.js';
import { type PolicyRule, rulesOf, toPolicyRule } from '../kinds/rbac/policy-rule.js';
import type { RequestAuthorizer } from './authorizer-chain.js';
import type { RbacIndexSource } from './rbac-authorizer.js';
import { RBAC_GROUP } from './rbac-index.js';

const ROLE_RESOURCES = new Set(['roles', 'clusterroles']);
const BINDING_RESOURCES = new Set(['rolebindings', 'clusterrolebindings']);

/** Everything: what it takes to set an aggregationRule. */
const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'], resourceNames: [], nonResourceURLs: [] },
  { verbs: ['*'], apiGroups: [], resources: [], resourceNames: [], nonResourceURLs: ['*'] },
];

type Json = Record<string, unknown>;

function forbidden(resource: string, name: string, detail: string): AdmissionError {
  const qualified = `${resource}.${RBAC_GROUP}`;
  const subject = name ? `${qualified} ${JSON.stringify(name)}` : qualified;
  return new AdmissionError({ code: 403, reason: 'Forbidden', message: `${subject} is forbidden: ${detail}`, details: { name: name || undefined, group: RBAC_GROUP, kind: resource } });
}

function hasAggregationRule(o: Json | null): boolean {
  const agg = o?.aggregationRule;
  return !!agg && typeof agg === 'object' && Array.isArray((agg as Json).clusterRoleSelectors) && ((agg as Json).clusterRoleSelectors as unknown[]).length > 0;
}

/**
 * Upstream's RBAC escalation prevention (the policy-based RBAC storage):
 * a user may create or change a Role/ClusterRole only with rules they hold
 * themselves (in the request's namespace), unless they may `escalate` it;
 * setting an aggregationRule takes full authority; a user may create or
 * change a binding only to a role whose rules they hold, unless they may
 * `bind` it. Privileged groups (system:masters) skip every check; updates
 * that only touch garbage-collection fields are not checked. Runs first in
 * the mutating phase, as upstream checks before admission. Rejects with
 * upstream's 403 texts.
 */
export class RbacEscalationModule implements AdmissionModule {
  readonly name = 'RBACEscalation';

  constructor(
    private readonly authorizer: RequestAuthorizer,
    private readonly indexes: RbacIndexSource,
  ) {}

  handles(operation: AdmissionOperation): boolean {
    return operation === 'CREATE' || operation === 'UPDATE';
  }

  async admit(attrs: AdmissionAttributes): Promise<void> {
    const res = attrs.resource.resource;
    if (attrs.resource.group !== RBAC_GROUP || attrs.subresource || !attrs.object) return;
    if (!ROLE_RESOURCES.has(res) && !BINDING_RESOURCES.has(res)) return;
    if (this.authorizer.isPrivileged(attrs.user.groups)) return;
    if (attrs.operation === 'UPDATE' && attrs.oldObject && onlyGarbageCollectionFieldsDiffer(attrs.object, attrs.oldObject)) return;
    if (ROLE_RESOURCES.has(res)) await this.checkRole(attrs, attrs.object);
    else await this.checkBinding(attrs, attrs.object);
  }

  private async allowed(attrs: AdmissionAttributes, verb: string, resource: string, name: string, namespace: string): Promise<boolean> {
    const a: AuthorizationAttributes = {
      user: attrs.user,
      tenant: attrs.tenant,
      verb,
      resourceRequest: true,
      apiGroup: RBAC_GROUP,
      apiVersion: '*',
      resource,
      subresource: '',
      namespace,
      name,
      path: '',
    };
    return (await this.authorizer.authorize(a)).allowed;
  }

  private async checkRole(attrs: AdmissionAttributes, obj: Json): Promise<void> {
    const res = attrs.resource.resource;
    // The request's name: empty for a POST, as upstream's RequestInfo has it.
    const requestName = attrs.operation === 'CREATE' ? '' : attrs.name;
    if (await this.allowed(attrs, 'escalate', res, requestName, attrs.namespace)) return;
    const name = attrs.name;
    const problem = await this.noEscalation(attrs.user, attrs.tenant, attrs.namespace, rulesOf(obj));
    if (problem) throw forbidden(res, name, problem);
    if (res === 'clusterroles' && (hasAggregationRule(obj) || (attrs.operation === 'UPDATE' && hasAggregationRule(attrs.oldObject)))) {
      if (await this.noEscalation(attrs.user, attrs.tenant, '', FULL_AUTHORITY)) {
        throw forbidden(res, name, 'must have cluster-admin privileges to use the aggregationRule');
      }
    }
  }

  private async checkBinding(attrs: AdmissionAttributes, obj: Json): Promise<void> {
    const res = attrs.resource.resource;
    const namespace = res === 'rolebindings' ? attrs.namespace : '';
    const ref = (obj.roleRef && typeof obj.roleRef === 'object' ? obj.roleRef : {}) as Json;
    const kind = typeof ref.kind === 'string' ? ref.kind : '';
    const roleName = typeof ref.name === 'string' ? ref.name : '';
    const roleResource = kind === 'Role' ? 'roles' : kind === 'ClusterRole' ? 'clusterroles' : '';
    if (roleResource && (await this.allowed(attrs, 'bind', roleResource, roleName, namespace))) return;
    const index = await this.indexes.get(attrs.tenant);
    const { rules, error } = index.roleReferenceRules({ kind, name: roleName }, namespace);
    if (!rules) throw forbidden(res, attrs.name, registryWording(error ?? ''));
    const problem = await this.noEscalation(attrs.user, attrs.tenant, namespace, rules);
    if (problem) throw forbidden(res, attrs.name, problem);
  }

  /** Upstream's ConfirmNoEscalation: undefined when `user`'s rules in `namespace` cover `rules`, else the reason. */
  private async noEscalation(user: UserInfo, tenant: string, namespace: string, rules: readonly PolicyRule[]): Promise<string | undefined> {
    const index = await this.indexes.get(tenant);
    const held = index.rulesFor(user, namespace, true);
    const result = covers(held.rules, rules.map((r) => toPolicyRule(r)));
    if (result.covered) return undefined;
    const groups = `[${user.groups.map((g) => JSON.stringify(g)).join(' ')}]`;
    const head = `user ${JSON.stringify(user.username)} (groups=${groups}) is attempting to grant RBAC permissions not currently held`;
    let msg = result.tooLarge ? `${head}: the rules are too many to check` : `${head}:\n${describeMissing(result.missing)}`;
    if (held.errors.length > 0) {
      const agg = held.errors.map(registryWording);
      msg += `; resolution errors: [${agg.length === 1 ? agg[0] : `[${agg.join(', ')}]`}]`;
    }
    return msg;
  }
}

/** The RBAC storage's role lookups fail with the resource's plural name (`clusterroles.rbac… "x" not found`), unlike the authorizer's listers. */
function registryWording(err: string): string {
  return err.replace(/^clusterrole\./, 'clusterroles.').replace(/^role\./, 'roles.');
}
