import { ApiError, type KubeObject } from '@plinth/apimachinery';
import { PLATFORM_TENANT, type TenantCondition, type TenantObject, type TenantStatus } from '../kinds/tenant/tenant-api.js';
import { tenantResource } from '../kinds/tenant/tenant.resource.js';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { systemWriteContext } from '../resource-store/write-context.js';

/** Writes what a snapshot controller reports into a Tenant's status. */
export type TenantStatusWriter = (name: string, change: (status: TenantStatus, tenant: TenantObject) => TenantStatus) => Promise<void>;

/**
 * A {@link TenantStatusWriter} through the store (a system update of the
 * platform's Tenant, retried on conflict by the store); a Tenant that is
 * gone is no error. `change` gets a copy of the status and returns the new one.
 */
export function tenantStatusWriter(store: Pick<ResourceStoreService, 'systemUpdate'>): TenantStatusWriter {
  return async (name, change) => {
    try {
      await store.systemUpdate(systemWriteContext(PLATFORM_TENANT, tenantResource), name, (o: KubeObject) => {
        const t = o as TenantObject;
        t.status = change(structuredClone(t.status ?? {}), t);
      });
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return;
      throw err;
    }
  };
}

/**
 * `status` with the condition `type` set (added, or replaced keeping its
 * lastTransitionTime when its status did not change). Mutates and returns `status`.
 */
export function withCondition(status: TenantStatus, tenant: TenantObject, type: string, value: TenantCondition['status'], reason: string, message: string): TenantStatus {
  const conditions = status.conditions ?? [];
  const old = conditions.find((c) => c.type === type);
  const lastTransitionTime = old && old.status === value ? old.lastTransitionTime : new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const next: TenantCondition = { type, status: value, reason, message, lastTransitionTime, observedGeneration: tenant.metadata.generation };
  status.conditions = [...conditions.filter((c) => c.type !== type), next];
  return status;
}
