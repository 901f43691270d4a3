import type { KubeObject } from '@plinth/apimachinery';
import { STANDARD_VERBS, type ResourceDefinition } from '../../registry/resource-definition.js';
import { nameColumn } from '../../table/standard-columns.js';
import { STORAGE_MIGRATION_GROUP, STORAGE_MIGRATION_STORAGE_RESOURCE, STORAGE_MIGRATION_VERSION, storageVersionMigrationSchema } from './storage-version-migration.schema.js';
import { storageVersionMigrationStatusStrategy, storageVersionMigrationStrategy } from './storage-version-migration.strategy.js';
import { migrationResource } from './storage-version-migration.validation.js';

/** upstream's printer: the fully qualified resource, `resource.group` (`resource` for the core group). */
function resourceCell(o: KubeObject): string {
  const { group, resource } = migrationResource(o);
  return group ? `${resource}.${group}` : resource;
}

/**
 * storagemigration.k8s.io/v1beta1 StorageVersionMigration (beta in 1.35):
 * cluster-scoped, per tenant, with a status subresource and upstream's
 * columns NAME and RESOURCE. Served when PLINTH_RUNTIME_CONFIG enables the
 * group version (off by default, as upstream); the migration itself runs
 * with the StorageVersionMigrator gate (storage-version-migration.controller.ts).
 */
export const storageVersionMigrationResource: ResourceDefinition = {
  group: STORAGE_MIGRATION_GROUP,
  version: STORAGE_MIGRATION_VERSION,
  resource: 'storageversionmigrations',
  singular: 'storageversionmigration',
  kind: 'StorageVersionMigration',
  listKind: 'StorageVersionMigrationList',
  namespaced: false,
  shortNames: [],
  categories: [],
  verbs: STANDARD_VERBS,
  subresources: [{ name: 'status', kind: 'StorageVersionMigration', group: STORAGE_MIGRATION_GROUP, version: STORAGE_MIGRATION_VERSION, verbs: ['get', 'patch', 'update'] }],
  subresourceStrategies: { status: storageVersionMigrationStatusStrategy },
  schema: storageVersionMigrationSchema,
  strategy: storageVersionMigrationStrategy,
  table: {
    columns: [nameColumn, { name: 'Resource', type: 'string', format: '', description: 'Fully qualified resource to migrate', priority: 0 }],
    cells: (o: KubeObject) => [o.metadata.name, resourceCell(o)],
  },
  selectableFields: {},
  storageResource: STORAGE_MIGRATION_STORAGE_RESOURCE,
  tracksGeneration: false,
  returnDeletedObject: false,
  nameValidation: 'subdomain',
};
