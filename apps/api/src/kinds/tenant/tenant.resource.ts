import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import type { ResourceDefinition } from '../../registry/resource-definition.js';
import { ageCell } from '../../table/human-duration.js';
import { ageColumn, nameColumn } from '../../table/standard-columns.js';
import { TENANCY_GROUP, TENANCY_VERSION, TENANT_STORAGE_RESOURCE } from './tenant-api.js';
import { tenantSchema } from './tenant.schema.js';
import { tenantStatusStrategy, tenantStrategy } from './tenant.strategy.js';

function statusField(o: KubeObject, key: 'phase' | 'url'): string {
  return isPlainObject(o.status) && typeof o.status[key] === 'string' ? (o.status[key] as string) : '';
}

function ownersCell(o: KubeObject): string {
  const owners = isPlainObject(o.spec) && Array.isArray(o.spec.owners) ? o.spec.owners : [];
  return owners
    .filter(isPlainObject)
    .map((w) => (w.kind === 'Group' ? `group:${String(w.name)}` : String(w.name)))
    .join(',');
}

/**
 * tenancy.plinth.dev/v1alpha1 Tenant: cluster-scoped, served only in the
 * platform scope (see PLATFORM_TENANT), with a status subresource and the
 * columns NAME, PHASE, OWNERS, AGE (URL with -o wide).
 */
export const tenantResource: ResourceDefinition = {
  group: TENANCY_GROUP,
  version: TENANCY_VERSION,
  resource: 'tenants',
  singular: 'tenant',
  kind: 'Tenant',
  listKind: 'TenantList',
  namespaced: false,
  shortNames: [],
  categories: [],
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: [{ name: 'status', kind: 'Tenant', group: TENANCY_GROUP, version: TENANCY_VERSION, verbs: ['get', 'patch', 'update'] }],
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
    ],
    cells: (o: KubeObject, now: Date) => [o.metadata.name, statusField(o, 'phase'), ownersCell(o), ageCell(o.metadata.creationTimestamp, now), statusField(o, 'url')],
  },
  selectableFields: { 'status.phase': (o: KubeObject) => statusField(o, 'phase') },
  storageResource: TENANT_STORAGE_RESOURCE,
  tracksGeneration: true,
  returnDeletedObject: true,
  nameValidation: 'label',
};
