import type { Migration } from 'kysely';
import * as initialSchema from './0001-initial-schema.migration.js';
import * as tenantLifecycle from './0002-tenant-lifecycle.migration.js';
import * as tenantUsage from './0003-tenant-usage.migration.js';
import * as usageLimitsInline from './0004-usage-limits-inline.migration.js';
import * as changesScopeIndex from './0005-changes-scope-index.migration.js';
import * as resourceQuota from './0006-resource-quota.migration.js';
import * as ownerReferences from './0007-owner-references.migration.js';
import * as batchedWrites from './0008-batched-writes.migration.js';
import * as changesNamespaceIndex from './0009-changes-namespace-index.migration.js';
import * as changesWithoutCopies from './0010-changes-without-copies.migration.js';
import * as objectsWithoutCopies from './0011-objects-without-copies.migration.js';
import * as changesScopeReader from './0012-changes-scope-reader.migration.js';
import * as changesNameOrderIndex from './0013-changes-name-order-index.migration.js';
import * as tenantPlacement from './0014-tenant-placement.migration.js';
import * as changesKeyedByTenant from './0015-changes-keyed-by-tenant.migration.js';
import * as encryptionRotation from './0017-encryption-rotation.migration.js';
import * as changesLabelIndex from './0018-changes-label-index.migration.js';
import * as rowLevelSecurity from './0019-row-level-security.migration.js';
import * as batchedAccounting from './0020-batched-accounting.migration.js';
import * as tenantMoveFencing from './0021-tenant-move-fencing.migration.js';
import * as revisionFence from './0022-revision-fence.migration.js';
import * as noJit from './0023-no-jit.migration.js';
import * as revisionMarks from './0024-revision-marks.migration.js';
import * as ginPendingOutsideCounter from './0025-gin-pending-outside-counter.migration.js';

/** Every migration, by name; names sort in the order they must run. */
export const migrations: Record<string, Migration> = {
  '0001-initial-schema': initialSchema,
  '0002-tenant-lifecycle': tenantLifecycle,
  '0003-tenant-usage': tenantUsage,
  '0004-usage-limits-inline': usageLimitsInline,
  '0005-changes-scope-index': changesScopeIndex,
  '0006-resource-quota': resourceQuota,
  '0007-owner-references': ownerReferences,
  '0008-batched-writes': batchedWrites,
  '0009-changes-namespace-index': changesNamespaceIndex,
  '0010-changes-without-copies': changesWithoutCopies,
  '0011-objects-without-copies': objectsWithoutCopies,
  '0012-changes-scope-reader': changesScopeReader,
  '0013-changes-name-order-index': changesNameOrderIndex,
  '0014-tenant-placement': tenantPlacement,
  '0015-changes-keyed-by-tenant': changesKeyedByTenant,
  '0017-encryption-rotation': encryptionRotation,
  '0018-changes-label-index': changesLabelIndex,
  '0019-row-level-security': rowLevelSecurity,
  '0020-batched-accounting': batchedAccounting,
  '0021-tenant-move-fencing': tenantMoveFencing,
  '0022-revision-fence': revisionFence,
  '0023-no-jit': noJit,
  '0024-revision-marks': revisionMarks,
  '0025-gin-pending-outside-counter': ginPendingOutsideCounter,
};
