import { Quantity } from '@plinth/apimachinery';
import type { TenantLimit, TenantUsage } from '@plinth/storage';
import { CRD_STORAGE_RESOURCE } from '../kinds/customresourcedefinition/crd.resource.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import { tenantLimitName } from '../resource-store/storage-errors.mapper.js';
import type { TenantLimits } from '../kinds/tenant/tenant-api.js';

/** The usage key of both webhook configuration kinds together (see migration 0003). */
export const WEBHOOK_CONFIGURATIONS_USAGE_KEY = 'webhookconfigurations';

/** Bytes of a validated `spec.limits.bytes` (a quantity or a number). */
function bytesOf(value: string | number): number {
  return typeof value === 'number' ? value : Number(Quantity.parse(value).num);
}

/**
 * The storage usage key of an `objectsPerResource` key (`<resource>` or
 * `<resource>.<group>`, upstream's `count/` names): the served kind's
 * storage resource in `tenant`, else the key itself, which is how custom
 * resources are stored (`<plural>.<group>`), so a limit may name a kind
 * whose CRD does not exist yet.
 */
export function usageKeyOf(registry: ResourceRegistry, tenant: string, key: string): string {
  const def = registry.all(tenant).find((d) => (d.group ? `${d.resource}.${d.group}` : d.resource) === key);
  return def?.storageResource ?? key;
}

/** A Tenant's `spec.limits` as the rows storage enforces (concurrentRequests and requestsPerSecond are not storage limits). */
export function storageLimits(registry: ResourceRegistry, tenant: string, limits: TenantLimits | undefined): TenantLimit[] {
  if (!limits) return [];
  const byKey = new Map<string, TenantLimit>();
  const put = (usageKey: string, l: Omit<TenantLimit, 'usageKey'>) => byKey.set(usageKey, { ...byKey.get(usageKey), usageKey, ...l });
  if (typeof limits.objects === 'number') put('', { maxObjects: limits.objects });
  if (limits.bytes !== undefined && limits.bytes !== null) put('', { maxBytes: bytesOf(limits.bytes) });
  for (const [key, n] of Object.entries(limits.objectsPerResource ?? {})) put(usageKeyOf(registry, tenant, key), { maxObjects: n });
  if (typeof limits.customResourceDefinitions === 'number') put(CRD_STORAGE_RESOURCE, { maxObjects: limits.customResourceDefinitions });
  if (typeof limits.webhookConfigurations === 'number') put(WEBHOOK_CONFIGURATIONS_USAGE_KEY, { maxObjects: limits.webhookConfigurations });
  return [...byKey.values()];
}

/** `status.usage` of a Tenant: everything it holds, and the objects per resource under ResourceQuota's `count/` names. */
export interface TenantUsageStatus {
  objects: number;
  bytes: number;
  objectsPerResource: Record<string, number>;
}

/** Turns storage's usage rows into {@link TenantUsageStatus}. Pure. */
export function usageStatus(rows: TenantUsage[]): TenantUsageStatus {
  const out: TenantUsageStatus = { objects: 0, bytes: 0, objectsPerResource: {} };
  for (const r of rows) {
    if (r.usageKey === '') {
      out.objects = r.objects;
      out.bytes = r.bytes;
    } else if (r.objects > 0) {
      out.objectsPerResource[tenantLimitName(r.usageKey, 'objects').slice('count/'.length)] = r.objects;
    }
  }
  return out;
}
