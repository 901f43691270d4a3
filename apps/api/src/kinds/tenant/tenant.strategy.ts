import { isDeepStrictEqual } from 'node:util';
import { fieldErrors, isPlainObject, type KubeObject } from '@plinth/apimachinery';
import type { ResourceStrategy } from '../../registry/resource-definition.js';
import { TENANT_FINALIZER } from './tenant-api.js';
import { validateTenant } from './tenant.validation.js';

function withFinalizer(obj: KubeObject): void {
  const finalizers = Array.isArray(obj.metadata.finalizers) ? obj.metadata.finalizers : [];
  if (!finalizers.includes(TENANT_FINALIZER)) obj.metadata.finalizers = [...finalizers, TENANT_FINALIZER];
}

/**
 * Tenant: status is server-owned (phase Initializing on create, kept on
 * updates of the main resource); every Tenant carries the logical-cluster
 * finalizer, so that deleting it removes its content before the object goes.
 * Pure; the methods mutate only the object they are given.
 */
export const tenantStrategy: ResourceStrategy = {
  prepareForCreate: (obj: KubeObject) => {
    // Placement (the TenantPlacement admission) has set spec.shard: the tenant is created there.
    const shard = isPlainObject(obj.spec) && typeof obj.spec.shard === 'string' && obj.spec.shard !== '' ? obj.spec.shard : undefined;
    obj.status = shard ? { phase: 'Initializing', shard } : { phase: 'Initializing' };
    withFinalizer(obj);
  },
  prepareForUpdate: (obj: KubeObject, old: KubeObject) => {
    obj.status = old.status;
    // The finalizer is the platform's: a client's update cannot drop it while the tenant lives.
    if (!old.metadata.deletionTimestamp && (old.metadata.finalizers ?? []).includes(TENANT_FINALIZER)) withFinalizer(obj);
  },
  validate: (obj: KubeObject) => validateTenant(obj),
  validateUpdate: (obj: KubeObject, old: KubeObject) => {
    const errs = validateTenant(obj);
    // What a tenant was restored from is history: it cannot change once the tenant exists.
    const source = (o: KubeObject) => (isPlainObject(o.spec) ? o.spec.source : undefined) ?? undefined;
    if (!isDeepStrictEqual(source(obj), source(old))) errs.push(fieldErrors.invalid('spec.source', source(obj) ?? null, 'field is immutable'));
    return errs;
  },
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};

/** Writes to tenants/status: only status may change. Mutates `obj`. */
export const tenantStatusStrategy: ResourceStrategy = {
  ...tenantStrategy,
  prepareForCreate: () => undefined,
  prepareForUpdate: (obj: KubeObject, old: KubeObject) => {
    obj.spec = old.spec;
    obj.metadata = { ...old.metadata, resourceVersion: obj.metadata.resourceVersion };
  },
  validateUpdate: () => [],
};
