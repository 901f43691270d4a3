import {
  type CompiledBinding,
  type CompiledValidatingPolicy,
  compileBinding,
  compileValidatingPolicy,
} from './compiled-policy.js';
import type { PolicyCel } from './policy-cel.js';
import type { MutatingAdmissionPolicyV1alpha1, PolicyBindingV1, ValidatingAdmissionPolicyV1 } from './policy-types.js';
import { type CompiledMutatingPolicy, compileMutatingPolicy } from './mutating-policy.compiler.js';

/** A compiled policy with the bindings that name it, sorted by name. */
export interface PolicyHook<P> {
  policy: P;
  bindings: CompiledBinding[];
}

/** Every policy of one tenant, compiled, in evaluation order (by policy name). */
export interface PolicySnapshot {
  validating: PolicyHook<CompiledValidatingPolicy>[];
  mutating: PolicyHook<CompiledMutatingPolicy>[];
}

/** What the policy modules read policies from. */
export interface PolicySource {
  /** The tenant's compiled policies. May reject when they cannot be read. */
  snapshot(tenant: string): Promise<PolicySnapshot>;
}

/** The stored policy objects of one tenant (newest state). */
export interface PolicyObjects {
  validatingPolicies: ValidatingAdmissionPolicyV1[];
  validatingBindings: PolicyBindingV1[];
  mutatingPolicies: MutatingAdmissionPolicyV1alpha1[];
  mutatingBindings: PolicyBindingV1[];
}

/** Subscribes to changes of a tenant's policy objects; `onEnd` when the stream broke. Returns the unsubscribe function. */
export type PolicyChangeSubscriber = (tenant: string, onChange: () => void, onEnd: () => void) => () => void;

interface TenantEntry {
  snapshot?: Promise<PolicySnapshot>;
  stale: boolean;
  unsubscribe?: () => void;
}

const MAX_TENANTS = 10_000;

function byName<T extends { metadata: { name?: string } }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : (a.metadata.name ?? '') > (b.metadata.name ?? '') ? 1 : 0));
}

/**
 * A per-tenant cache of compiled policies that follows the change stream:
 * the first request of a tenant subscribes to its policy and binding
 * changes, then reads them; a change marks the snapshot stale and the next
 * request reads them again (no polling, no TTL). A policy is compiled once
 * per uid and generation and reused across reloads. At most 10,000 tenants
 * are kept (least recently loaded first out).
 */
export class PolicyCache implements PolicySource {
  private readonly tenants = new Map<string, TenantEntry>();
  private readonly compiled = new Map<string, { generation: number; policy: CompiledValidatingPolicy | CompiledMutatingPolicy }>();

  constructor(
    private readonly cel: PolicyCel,
    private readonly load: (tenant: string) => Promise<PolicyObjects>,
    private readonly subscribe?: PolicyChangeSubscriber,
  ) {}

  snapshot(tenant: string): Promise<PolicySnapshot> {
    let entry = this.tenants.get(tenant);
    if (!entry) {
      entry = { stale: true };
      this.tenants.set(tenant, entry);
      this.evict();
    }
    // Without a change stream nothing tells us about changes: read every time.
    if (!this.subscribe) entry.stale = true;
    if (entry.snapshot && !entry.stale) return entry.snapshot;
    if (this.subscribe && !entry.unsubscribe) {
      const e = entry;
      e.unsubscribe = this.subscribe(
        tenant,
        () => (e.stale = true),
        () => {
          e.stale = true;
          e.unsubscribe = undefined;
        },
      );
    }
    entry.stale = false;
    const p = this.read(tenant);
    entry.snapshot = p;
    p.catch(() => {
      if (entry!.snapshot === p) entry!.stale = true;
    });
    return p;
  }

  /** Marks a tenant's snapshot stale, so the next request reads its policies afresh (read-your-writes on this replica). */
  invalidate(tenant: string): void {
    const e = this.tenants.get(tenant);
    if (e) e.stale = true;
  }

  /** Forgets every tenant and subscription (shutdown, tests). */
  clear(): void {
    for (const e of this.tenants.values()) e.unsubscribe?.();
    this.tenants.clear();
    this.compiled.clear();
  }

  private evict(): void {
    while (this.tenants.size > MAX_TENANTS) {
      const [oldest, e] = this.tenants.entries().next().value as [string, TenantEntry];
      e.unsubscribe?.();
      this.tenants.delete(oldest);
    }
  }

  private cachedCompile<P extends CompiledValidatingPolicy | CompiledMutatingPolicy>(
    tenant: string,
    meta: { uid?: string; generation?: number; name?: string },
    build: () => P,
  ): P {
    const key = `${tenant}\u0000${meta.uid ?? meta.name}`;
    const hit = this.compiled.get(key);
    if (hit && hit.generation === (meta.generation ?? 0)) return hit.policy as P;
    const policy = build();
    this.compiled.set(key, { generation: meta.generation ?? 0, policy });
    return policy;
  }

  private async read(tenant: string): Promise<PolicySnapshot> {
    const objects = await this.load(tenant);
    const hooks = <P extends { name: string }>(policies: P[], bindings: PolicyBindingV1[]): PolicyHook<P>[] => {
      const byPolicy = new Map<string, CompiledBinding[]>();
      for (const b of byName(bindings)) {
        const name = b.spec?.policyName ?? '';
        if (!byPolicy.has(name)) byPolicy.set(name, []);
        byPolicy.get(name)!.push(compileBinding(b));
      }
      return policies.filter((p) => byPolicy.has(p.name)).map((policy) => ({ policy, bindings: byPolicy.get(policy.name)! }));
    };
    const validating = byName(objects.validatingPolicies).map((p) => this.cachedCompile(tenant, p.metadata, () => compileValidatingPolicy(this.cel, p)));
    const mutating = byName(objects.mutatingPolicies).map((p) => this.cachedCompile(tenant, p.metadata, () => compileMutatingPolicy(this.cel, p)));
    const live = new Set([...objects.validatingPolicies, ...objects.mutatingPolicies].map((p) => `${tenant}\u0000${p.metadata.uid ?? p.metadata.name}`));
    for (const key of this.compiled.keys()) if (key.startsWith(`${tenant}\u0000`) && !live.has(key)) this.compiled.delete(key);
    return { validating: hooks(validating, objects.validatingBindings), mutating: hooks(mutating, objects.mutatingBindings) };
  }
}
