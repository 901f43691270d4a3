import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import type { ResourceDefinition, StorageConversion } from '../../registry/resource-definition.js';
import { ageCell } from '../../table/human-duration.js';
import { ageColumn, nameColumn } from '../../table/standard-columns.js';
import { TENANCY_BETA_VERSION, TENANCY_GROUP, TENANCY_VERSION, TENANT_STORAGE_RESOURCE } from './tenant-api.js';
import { tenantSchema } from './tenant.schema.js';
import { tenantStatusStrategy, tenantStrategy } from './tenant.strategy.js';

function statusField(o: KubeObject, key: 'phase' | 'url' | 'shard'): string {
  return isPlainObject(o.status) && typeof o.status[key] === 'string' ? (o.status[key] as string) : '';
}

function ownersCell(o: KubeObject): string {
  const owners = isPlainObject(o.spec) && Array.isArray(o.spec.owners) ? o.spec.owners : [];
  return owners
    .filter(isPlainObject)
    .map((w) => (w.kind === 'Group' ? `group:${String(w.name)}` : String(w.name)))
    .join(',');
}

/** A copy of `obj` under `apiVersion` (the same object when it already is). */
function withApiVersion(obj: KubeObject, apiVersion: string): KubeObject {
  return obj.apiVersion === apiVersion ? obj : { ...obj, apiVersion };
}

/**
 * The round trip between a served version of Tenant and the storage
 * version (v1alpha1): the versions share one schema, so only `apiVersion`
 * changes and every field survives v1alpha1 → v1beta1 → v1alpha1.
 */
function storedAsAlpha(version: string): StorageConversion {
  return {
    toStored: (obj) => withApiVersion(obj, `${TENANCY_GROUP}/${TENANCY_VERSION}`),
    fromStored: (obj) => withApiVersion(obj, `${TENANCY_GROUP}/${version}`),
  };
}

/** The Tenant kind as served at `tenancy.plinth.dev/<version>`; see {@link tenantResource}. */
function tenantResourceAt(version: string): ResourceDefinition {
  return {
    group: TENANCY_GROUP,
    version,
    resource: 'tenants',
    singular: 'tenant',
    kind: 'Tenant',
    listKind: 'TenantList',
    namespaced: false,
    shortNames: [],
    categories: [],
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    subresources: [
      { name: 'status', kind: 'Tenant', group: TENANCY_GROUP, version, verbs: ['get', 'patch', 'update'] },
      // The tenant's snapshot (docs/snapshots.md): get exports, create restores; served by snapshots/snapshot.rest.ts.
      { name: 'snapshot', kind: 'Tenant', group: TENANCY_GROUP, version, verbs: ['get', 'create'] },
      // Named namespaces and objects back from the change history (POST): snapshots/snapshot.rest.ts.
      { name: 'restore', kind: 'Tenant', group: TENANCY_GROUP, version, verbs: ['create'] },
      // The platform's view of the tenant's objects (/services/platform/clusters/<tenant or *>/…, docs/api-sharing.md): apisharing/platform-view.rest.ts.
      { name: 'content', kind: 'Tenant', group: TENANCY_GROUP, version, verbs: ['get', 'list', 'watch'] },
      // The tenant's snapshots in the snapshot target (GET): snapshots/snapshot-catalog.ts.
      { name: 'snapshots', kind: 'TenantSnapshotList', group: TENANCY_GROUP, version, verbs: ['get'] },
    ],
    schema: tenantSchema,
    strategy: tenantStrategy,
    subresourceStrategies: { status: tenantStatusStrategy },
    table: {
      columns: [
        nameColumn,
        { name: 'Phase', type: 'string', format: '', description: 'Phase of the tenant: Initializing, Active or Terminating.', priority: 0 },
        { name: 'Owners', type: 'string', format: '', description: 'Owners administer the tenant (groups prefixed "group:").', priority: 0 },
        ageColumn,
        { name: 'URL', type: 'string', format: '', description: 'URL of the tenant\'s logical cluster.', priority: 1 },
        { name: 'Shard', type: 'string', format: '', description: 'Shard the tenant lives on.', priority: 1 },
      ],
      cells: (o: KubeObject, now: Date) => [o.metadata.name, statusField(o, 'phase'), ownersCell(o), ageCell(o.metadata.creationTimestamp, now), statusField(o, 'url'), statusField(o, 'shard')],
    },
    selectableFields: { 'status.phase': (o: KubeObject) => statusField(o, 'phase') },
    storageResource: TENANT_STORAGE_RESOURCE,
    conversion: storedAsAlpha(version),
    tracksGeneration: true,
    // Every replica keeps the tenant directory from these objects: a write returns once this replica has applied it.
    cachedOnEveryReplica: true,
    returnDeletedObject: true,
    nameValidation: 'label',
  };
}

/**
 * tenancy.plinth.dev/v1alpha1 Tenant: cluster-scoped, served only in the
 * platform scope (see PLATFORM_TENANT), with a status subresource and the
 * columns NAME, PHASE, OWNERS, AGE (URL and SHARD with -o wide). An alpha version:
 * served only when the runtime configuration enables it
 * (`PLINTH_RUNTIME_CONFIG=tenancy.plinth.dev/v1alpha1=true`); the
 * platform's own lifecycle writes through it either way. Objects are stored
 * as v1alpha1.
 */
export const tenantResource: ResourceDefinition = tenantResourceAt(TENANCY_VERSION);

/** tenancy.plinth.dev/v1beta1 Tenant: the same objects and schema as {@link tenantResource}, served by default. */
export const tenantResourceV1beta1: ResourceDefinition = tenantResourceAt(TENANCY_BETA_VERSION);
