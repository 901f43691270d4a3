import { resetObjectMetaForStatus } from '@plinth/apimachinery';
import type { ResourceStrategy } from '../../registry/resource-definition.js';
import { validateStorageVersionMigration, validateStorageVersionMigrationStatus, validateStorageVersionMigrationUpdate } from './storage-version-migration.validation.js';

/**
 * storagemigration.k8s.io StorageVersionMigration (registry/storagemigration):
 * the status is the controller's (cleared on create, carried over on
 * update); spec.resource is immutable.
 */
export const storageVersionMigrationStrategy: ResourceStrategy = {
  prepareForCreate: (obj) => {
    delete obj.status;
  },
  prepareForUpdate: (obj, old) => {
    if (old.status === undefined) delete obj.status;
    else obj.status = structuredClone(old.status);
  },
  validate: (obj) => validateStorageVersionMigration(obj),
  validateUpdate: (obj, old) => validateStorageVersionMigrationUpdate(obj, old),
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};

/** The `/status` subresource: the spec and the metadata upstream resets are the stored ones; the status is validated as upstream. */
export const storageVersionMigrationStatusStrategy: ResourceStrategy = {
  prepareForCreate: () => undefined,
  prepareForUpdate: (obj, old) => {
    obj.spec = structuredClone(old.spec);
    resetObjectMetaForStatus(obj.metadata, old.metadata);
  },
  validate: () => [],
  validateUpdate: (obj, old) => validateStorageVersionMigrationStatus(obj, old),
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};
