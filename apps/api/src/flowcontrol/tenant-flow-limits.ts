import { STORAGE, type Storage } from '@plinth/storage';
import type { ObserveChanges } from '../watch/observe-changes.js';
import { PLATFORM_TENANT, TENANT_STORAGE_RESOURCE, type TenantLimits } from '../kinds/tenant/tenant-api.js';
import type { FlowLimits } from './fair-queuing.js';

/** The request limits a Tenant's spec sets; absent fields take the configured defaults. */
type RequestLimits = Pick<TenantLimits, 'concurrentRequests' | 'requestsPerSecond'>;

/**
 * Each tenant's request limits on this replica: `spec.limits.concurrentRequests`
 * and `requestsPerSecond` of its Tenant object, followed through the change
 * stream every replica runs (so a change applies on every replica within
 * moments), else the configured defaults.
 */
export class TenantFlowLimits {
  private readonly byTenant = new Map<string, RequestLimits>();

  constructor(
    private readonly defaults: { concurrency: number; queueLength: number },
    private readonly lists: Storage,
    observe: ObserveChanges,
  ) {
    observe(TENANT_STORAGE_RESOURCE, {
      onChange: (c) => (c.type === 'DELETED' ? this.byTenant.delete(c.key.name) : this.put(c.key.name, c.object)),
      onReset: () => this.reload(),
    });
  }

  /** Reads every Tenant again after a reset of the change stream; retried every second while the database cannot serve. */
  private reload(): void {
    this.load().catch(() => setTimeout(() => this.reload(), 1000).unref());
  }

  /** Reads every Tenant once (start-up); later changes arrive through the change stream. */
  async load(): Promise<void> {
    const page = await this.lists.list({ tenant: PLATFORM_TENANT, resource: TENANT_STORAGE_RESOURCE });
    for (const item of page.items) this.put(String((item.body.metadata as { name?: string }).name), item.body);
  }

  /** The limits `tenant` runs under here. */
  limitsOf(tenant: string): FlowLimits {
    const l = this.byTenant.get(tenant);
    return {
      concurrency: l?.concurrentRequests ?? this.defaults.concurrency,
      queueLength: this.defaults.queueLength,
      requestsPerSecond: l?.requestsPerSecond,
    };
  }

  private put(name: string, body: Record<string, unknown>): void {
    const limits = ((body.spec as { limits?: TenantLimits } | undefined)?.limits ?? {}) as TenantLimits;
    const pick = (n: unknown) => (typeof n === 'number' && n > 0 ? n : undefined);
    this.byTenant.set(name, { concurrentRequests: pick(limits.concurrentRequests), requestsPerSecond: pick(limits.requestsPerSecond) });
  }
}
