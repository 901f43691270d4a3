import { LRUCache } from 'lru-cache';
import type { UserInfo } from '@plinth/admission';
import type { AuthorizationDecision } from '@plinth/apimachinery';
import { type PolicyRule, rulesOf } from '../kinds/rbac/policy-rule.js';

/** The storage resources (`group/resource`) the index follows. */
export const RBAC_GROUP = 'rbac.authorization.k8s.io';
export const ROLES = `${RBAC_GROUP}/roles`;
export const CLUSTER_ROLES = `${RBAC_GROUP}/clusterroles`;
export const ROLE_BINDINGS = `${RBAC_GROUP}/rolebindings`;
export const CLUSTER_ROLE_BINDINGS = `${RBAC_GROUP}/clusterrolebindings`;
/**
 * Decisions remembered over all tenants' indexes: one LRU bounded in
 * entries and in key characters (a key holds user names and paths a
 * client chooses), so neither many tenants nor long names grow it.
 */
const DECISIONS = new LRUCache<string, AuthorizationDecision>({
  max: 10_000,
  maxSize: 4_000_000,
  sizeCalculation: (_decision, key) => key.length + 64,
});
let nextIndexId = 0;
/** Every storage resource an index is fed from. */
export const RBAC_STORAGE_RESOURCES = [ROLES, CLUSTER_ROLES, ROLE_BINDINGS, CLUSTER_ROLE_BINDINGS];

/** rbac/v1 Subject. */
export interface Subject {
  kind: string;
  apiGroup: string;
  name: string;
  namespace: string;
}

/** A RoleBinding or ClusterRoleBinding as the index keeps it. */
export interface BindingEntry {
  kind: 'RoleBinding' | 'ClusterRoleBinding';
  name: string;
  /** '' for ClusterRoleBindings. */
  namespace: string;
  roleRef: { kind: string; name: string };
  subjects: Subject[];
  /** Subject-index keys this binding is filed under. */
  keys: string[];
}

/** A ClusterRole as the index keeps it. */
export interface ClusterRoleEntry {
  name: string;
  rules: readonly PolicyRule[];
}

/** Rule lists up to this size (as JSON) are shared between every index that holds an equal list. */
const MAX_SHARED_RULES_JSON = 16 * 1024;

/**
 * Equal rule lists, one copy: every tenant holds upstream's default roles,
 * so sharing them keeps a tenant's index to its own bindings and names.
 * Bounded (entries and size), so tenants cannot grow it without limit.
 */
const sharedRules = new LRUCache<string, readonly PolicyRule[]>({ max: 4096, maxSize: 8 * 1024 * 1024, sizeCalculation: (_v, k) => k.length + 64 });

/** The rules of a Role or ClusterRole, shared with equal lists already held (frozen: never mutate them). */
function sharedRulesOf(obj: Record<string, unknown>): readonly PolicyRule[] {
  const key = JSON.stringify(obj.rules ?? null);
  if (key.length > MAX_SHARED_RULES_JSON) return rulesOf(obj);
  let rules = sharedRules.get(key);
  if (!rules) {
    rules = Object.freeze(rulesOf(obj).map((r) => Object.freeze(r)));
    sharedRules.set(key, rules);
  }
  return rules;
}

/**
 * Called with each rule that applies (`describe()` names its binding, as
 * upstream's describer) or with an error resolving a binding's role.
 * Returning false stops the visit.
 */
export type RuleVisitor = (describe: () => string, rule: PolicyRule | undefined, err: string | undefined) => boolean;

const SA_PREFIX = 'system:serviceaccount:';

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function meta(obj: Record<string, unknown>): Record<string, unknown> {
  return obj.metadata && typeof obj.metadata === 'object' ? (obj.metadata as Record<string, unknown>) : {};
}

function toSubject(raw: unknown): Subject {
  const s = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  return { kind: str(s.kind), apiGroup: str(s.apiGroup), name: str(s.name), namespace: str(s.namespace) };
}

/** The subject-index key of `s` in a binding of `namespace` ('' for cluster bindings); undefined when it can match nobody. */
function subjectKey(s: Subject, namespace: string): string | undefined {
  switch (s.kind) {
    case 'User':
      return `u:${s.name}`;
    case 'Group':
      return `g:${s.name}`;
    case 'ServiceAccount': {
      const ns = s.namespace || namespace;
      // A ServiceAccount's user name is system:serviceaccount:<ns>:<name>, so matching it is a user-name match.
      return ns ? `u:${SA_PREFIX}${ns}:${s.name}` : undefined;
    }
    default:
      return undefined;
  }
}

/** Upstream's describeSubject (a ServiceAccount as `name/namespace`). */
function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount') return `${s.kind} ${JSON.stringify(`${s.name}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind} ${JSON.stringify(s.name)}`;
}

function describeBinding(b: BindingEntry, s: Subject): string {
  const name = b.kind === 'RoleBinding' ? `${b.name}/${b.namespace}` : b.name;
  return `${b.kind} ${JSON.stringify(name)} of ${b.roleRef.kind} ${JSON.stringify(b.roleRef.name)} to ${describeSubject(s, b.namespace)}`;
}

function userKeys(user: UserInfo): string[] {
  return [`u:${user.username}`, ...user.groups.map((g) => `g:${g}`)];
}

/** Groups every identity of a kind carries: a binding to them does not make anyone a member of a tenant. */
export const EVERYONE_GROUPS: ReadonlySet<string> = new Set(['system:authenticated', 'system:unauthenticated', 'system:serviceaccounts']);

const nsKey = (namespace: string, name: string) => `${namespace}\u0000${name}`;

/** Bindings of one subject key, grouped by the role they grant (so a decision visits each role once). */
type ByRole = Map<string, Set<BindingEntry>>;

/** Identifies the role a binding grants: a Role is per namespace, a ClusterRole per tenant. */
function roleKey(b: BindingEntry): string {
  return `${b.roleRef.kind}\u0000${b.roleRef.kind === 'Role' ? b.namespace : ''}\u0000${b.roleRef.name}`;
}

/**
 * One tenant's RBAC objects in memory, indexed for authorization: bindings
 * by subject (user name, group, ServiceAccount user name), roles by
 * namespace and name. Fed with whole objects ({@link put}/{@link remove});
 * not thread-aware, never does I/O. Lookups cost O(bindings of the user's
 * subjects), not O(all bindings).
 */
export class TenantRbacIndex {
  private readonly clusterRoles = new Map<string, ClusterRoleEntry>();
  private readonly roles = new Map<string, readonly PolicyRule[]>();
  private readonly bindings = new Map<string, BindingEntry>();
  /** Cluster bindings by subject key, then by role. */
  private readonly clusterBySubject = new Map<string, ByRole>();
  /** Namespaced bindings by namespace + subject key, then by role. */
  private readonly namespacedBySubject = new Map<string, ByRole>();
  /** How many bindings (of any kind, anywhere in the tenant) name each subject key: tenant membership. */
  private readonly subjectBindings = new Map<string, number>();
  /** Names this index's decisions in the shared cache (see {@link decisionOf}). */
  private readonly id = nextIndexId++;
  /**
   * Bumped by every {@link put} and {@link remove}: decisions remembered
   * under an older generation are never read again (they age out of the
   * LRU), so a revoked binding or an edited role takes effect on the next
   * request.
   */
  private generation = 0;

  /** How many objects the index holds. */
  get size(): number {
    return this.clusterRoles.size + this.roles.size + this.bindings.size;
  }

  /** Adds or replaces the object `obj` of storage resource `resource`. Keeps no reference into `obj`. */
  put(resource: string, obj: Record<string, unknown>): void {
    this.generation++;
    const m = meta(obj);
    const name = str(m.name);
    const namespace = str(m.namespace);
    switch (resource) {
      case CLUSTER_ROLES: {
        this.clusterRoles.set(name, { name, rules: sharedRulesOf(obj) });
        return;
      }
      case ROLES:
        this.roles.set(nsKey(namespace, name), sharedRulesOf(obj));
        return;
      case ROLE_BINDINGS:
      case CLUSTER_ROLE_BINDINGS:
        this.putBinding(resource === ROLE_BINDINGS ? 'RoleBinding' : 'ClusterRoleBinding', name, namespace, obj);
        return;
    }
  }

  /** Forgets the object `namespace/name` of `resource`; a no-op when absent. */
  remove(resource: string, namespace: string, name: string): void {
    this.generation++;
    switch (resource) {
      case CLUSTER_ROLES:
        this.clusterRoles.delete(name);
        return;
      case ROLES:
        this.roles.delete(nsKey(namespace, name));
        return;
      case ROLE_BINDINGS:
        this.removeBinding('RoleBinding', namespace, name);
        return;
      case CLUSTER_ROLE_BINDINGS:
        this.removeBinding('ClusterRoleBinding', '', name);
        return;
    }
  }

  /**
   * The decision for the request described by `key` (every attribute the
   * decision reads, see rbac-authorizer's decisionKey) over the index as it
   * is now: the remembered one when the same key was decided since the last
   * change of the index, else `decide()`, remembered in a cache shared by
   * all indexes (bounded, least recently used dropped). `decide` must be
   * pure over the index.
   */
  decisionOf(key: string, decide: () => AuthorizationDecision): AuthorizationDecision {
    const scoped = `${this.id}\u0003${this.generation}\u0003${key}`;
    const known = DECISIONS.get(scoped);
    if (known) return known;
    const decision = decide();
    DECISIONS.set(scoped, decision);
    return decision;
  }

  /** Every ClusterRole (for aggregation). The entries must not be mutated. */
  allClusterRoles(): ClusterRoleEntry[] {
    return [...this.clusterRoles.values()];
  }

  /** The ClusterRole `name`, or undefined. */
  clusterRole(name: string): ClusterRoleEntry | undefined {
    return this.clusterRoles.get(name);
  }

  /**
   * Upstream's GetRoleReferenceRules: the rules of a binding's role, or the
   * NotFound text upstream reports when the role does not exist.
   */
  roleReferenceRules(roleRef: { kind: string; name: string }, namespace: string): { rules?: readonly PolicyRule[]; error?: string } {
    if (roleRef.kind === 'ClusterRole') {
      const r = this.clusterRoles.get(roleRef.name);
      return r ? { rules: r.rules } : { error: `clusterrole.${RBAC_GROUP} ${JSON.stringify(roleRef.name)} not found` };
    }
    if (roleRef.kind === 'Role') {
      const r = this.roles.get(nsKey(namespace, roleRef.name));
      return r ? { rules: r } : { error: `role.${RBAC_GROUP} ${JSON.stringify(roleRef.name)} not found` };
    }
    return { error: `unsupported role reference kind: ${JSON.stringify(roleRef.kind)}` };
  }

  /**
   * Upstream's VisitRulesFor: the rules of every ClusterRoleBinding that
   * applies to `user`, then (when `namespace` is set) of every RoleBinding
   * in `namespace` that does, until `visitor` returns false. With
   * `distinctRoles`, a role reached through several bindings is visited
   * once (through the first), which bounds a decision by the number of
   * distinct roles rather than bindings.
   */
  visitRulesFor(user: UserInfo, namespace: string, visitor: RuleVisitor, distinctRoles = false): void {
    const keys = userKeys(user);
    const seen = new Set<string>();
    if (!this.visitBindings(this.candidates(this.clusterBySubject, keys, '', distinctRoles, seen), user, '', visitor)) return;
    if (namespace) this.visitBindings(this.candidates(this.namespacedBySubject, keys, namespace, distinctRoles, seen), user, namespace, visitor);
  }

  /**
   * Whether `user` is a member of this tenant: some binding in it names the
   * user, or a group of the user other than the groups every identity of a
   * kind carries (`system:authenticated`, `system:unauthenticated`,
   * `system:serviceaccounts`). Bindings to those groups grant rights to the
   * tenant's members only (see RbacAuthorizer).
   */
  hasMember(user: UserInfo): boolean {
    if ((this.subjectBindings.get(`u:${user.username}`) ?? 0) > 0) return true;
    return user.groups.some((g) => !EVERYONE_GROUPS.has(g) && (this.subjectBindings.get(`g:${g}`) ?? 0) > 0);
  }

  /** Upstream's RulesFor: every rule that applies to `user` in `namespace`, and the errors met resolving them. */
  rulesFor(user: UserInfo, namespace: string, distinctRoles = false): { rules: PolicyRule[]; errors: string[] } {
    const rules: PolicyRule[] = [];
    const errors: string[] = [];
    this.visitRulesFor(
      user,
      namespace,
      (_d, rule, err) => {
        if (rule) rules.push(rule);
        if (err) errors.push(err);
        return true;
      },
      distinctRoles,
    );
    return { rules, errors };
  }

  /** The bindings filed under `keys`, grouped by role; with `distinctRoles`, only the first binding of each role. */
  private candidates(map: Map<string, ByRole>, keys: string[], namespace: string, distinctRoles: boolean, seen: Set<string>): BindingEntry[] {
    const out: BindingEntry[] = [];
    const taken = new Set<BindingEntry>();
    for (const k of keys) {
      const byRole = map.get(namespace ? nsKey(namespace, k) : k);
      if (!byRole) continue;
      for (const [role, set] of byRole) {
        if (distinctRoles) {
          if (seen.has(role)) continue;
          seen.add(role);
          out.push(set.values().next().value as BindingEntry);
          continue;
        }
        for (const b of set) {
          if (taken.has(b)) continue;
          taken.add(b);
          out.push(b);
        }
      }
    }
    return out;
  }

  private visitBindings(bindings: BindingEntry[], user: UserInfo, namespace: string, visitor: RuleVisitor): boolean {
    for (const b of bindings) {
      const subject = b.subjects.find((s) => appliesTo(user, s, namespace));
      if (!subject) continue;
      const { rules, error } = this.roleReferenceRules(b.roleRef, namespace);
      if (!rules) {
        if (!visitor(() => '', undefined, error)) return false;
        continue;
      }
      const describe = () => describeBinding(b, subject);
      for (const rule of rules) if (!visitor(describe, rule, undefined)) return false;
    }
    return true;
  }

  private putBinding(kind: BindingEntry['kind'], name: string, namespace: string, obj: Record<string, unknown>): void {
    this.removeBinding(kind, namespace, name);
    const ref = (obj.roleRef && typeof obj.roleRef === 'object' ? obj.roleRef : {}) as Record<string, unknown>;
    const subjects = Array.isArray(obj.subjects) ? obj.subjects.map(toSubject) : [];
    const bindingNs = kind === 'RoleBinding' ? namespace : '';
    const keys = [...new Set(subjects.map((s) => subjectKey(s, bindingNs)).filter((k): k is string => k !== undefined))];
    const entry: BindingEntry = { kind, name, namespace: bindingNs, roleRef: { kind: str(ref.kind), name: str(ref.name) }, subjects, keys };
    this.bindings.set(`${kind}\u0000${nsKey(bindingNs, name)}`, entry);
    for (const k of keys) this.subjectBindings.set(k, (this.subjectBindings.get(k) ?? 0) + 1);
    const map = kind === 'RoleBinding' ? this.namespacedBySubject : this.clusterBySubject;
    const role = roleKey(entry);
    for (const k of keys) {
      const key = kind === 'RoleBinding' ? nsKey(bindingNs, k) : k;
      let byRole = map.get(key);
      if (!byRole) map.set(key, (byRole = new Map()));
      let set = byRole.get(role);
      if (!set) byRole.set(role, (set = new Set()));
      set.add(entry);
    }
  }

  private removeBinding(kind: BindingEntry['kind'], namespace: string, name: string): void {
    const id = `${kind}\u0000${nsKey(namespace, name)}`;
    const entry = this.bindings.get(id);
    if (!entry) return;
    this.bindings.delete(id);
    for (const k of entry.keys) {
      const n = (this.subjectBindings.get(k) ?? 0) - 1;
      if (n > 0) this.subjectBindings.set(k, n);
      else this.subjectBindings.delete(k);
    }
    const map = kind === 'RoleBinding' ? this.namespacedBySubject : this.clusterBySubject;
    const role = roleKey(entry);
    for (const k of entry.keys) {
      const key = kind === 'RoleBinding' ? nsKey(namespace, k) : k;
      const byRole = map.get(key);
      const set = byRole?.get(role);
      set?.delete(entry);
      if (set && set.size === 0) byRole!.delete(role);
      if (byRole && byRole.size === 0) map.delete(key);
    }
  }
}

/** Upstream's appliesToUser for one subject of a binding in `namespace` ('' for cluster bindings). */
export function appliesTo(user: UserInfo, s: Subject, namespace: string): boolean {
  switch (s.kind) {
    case 'User':
      return user.username === s.name;
    case 'Group':
      return user.groups.includes(s.name);
    case 'ServiceAccount': {
      const ns = s.namespace || namespace;
      return ns !== '' && user.username === `${SA_PREFIX}${ns}:${s.name}`;
    }
    default:
      return false;
  }
}
