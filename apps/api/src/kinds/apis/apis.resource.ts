import { type FieldError, fieldErrors, isPlainObject, type KubeObject, resetObjectMetaForStatus } from '@plinth/apimachinery';
import { STANDARD_VERBS, type ResourceDefinition, type ResourceStrategy } from '../../registry/resource-definition.js';
import { ageCell } from '../../table/human-duration.js';
import { ageColumn, nameColumn } from '../../table/standard-columns.js';
import { exportedResources, exportReference } from './apis-types.js';
import { validateClaims } from './permission-claims.js';
import { APIBINDING_CLEANUP_FINALIZER, APIBINDING_STORAGE_RESOURCE, APIEXPORT_STORAGE_RESOURCE, APIS_GROUP, APIS_VERSION, apiBindingSchema, apiExportSchema } from './apis.schema.js';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function validateExport(o: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  exportedResources(o).forEach((r, i) => {
    if (r.resource === '') errs.push(fieldErrors.required(`spec.resources[${i}].resource`, ''));
    const key = `${r.group}/${r.resource}`;
    if (seen.has(key)) errs.push(fieldErrors.duplicate(`spec.resources[${i}]`, key));
    seen.add(key);
  });
  return [...errs, ...validateClaims(o, 'spec.permissionClaims', false)];
}

function validateBinding(o: KubeObject): FieldError[] {
  const ref = exportReference(o);
  const errs: FieldError[] = [];
  if (ref.path === '') errs.push(fieldErrors.required('spec.reference.export.path', 'the tenant of the APIExport'));
  else if (!DNS_LABEL.test(ref.path)) errs.push(fieldErrors.invalid('spec.reference.export.path', ref.path, 'must be the name of a tenant'));
  if (ref.name === '') errs.push(fieldErrors.required('spec.reference.export.name', ''));
  return [...errs, ...validateClaims(o, 'spec.permissionClaims', true)];
}

/** A strategy whose status is the server's: cleared on create, carried over on update. */
function specStrategy(validate: (o: KubeObject) => FieldError[], validateUpdate: (o: KubeObject, old: KubeObject) => FieldError[]): ResourceStrategy {
  return {
    prepareForCreate: (o) => {
      delete o.status;
    },
    prepareForUpdate: (o, old) => {
      if (old.status === undefined) delete o.status;
      else o.status = structuredClone(old.status);
    },
    validate,
    validateUpdate,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
  };
}

/** Adds the cleanup finalizer to a binding not being deleted (upstream's ensureFinalizer of CRDs). */
function ensureCleanupFinalizer(o: KubeObject): void {
  if (o.metadata.deletionTimestamp) return;
  const f = (o.metadata.finalizers ??= []);
  if (!f.includes(APIBINDING_CLEANUP_FINALIZER)) f.push(APIBINDING_CLEANUP_FINALIZER);
}

/** The APIBinding's strategy: {@link specStrategy}, and the cleanup finalizer on create and update. */
function bindingStrategy(): ResourceStrategy {
  const base = specStrategy(validateBinding, validateBindingUpdate);
  return {
    ...base,
    prepareForCreate: (o, ...rest) => {
      base.prepareForCreate(o, ...rest);
      ensureCleanupFinalizer(o);
    },
    prepareForUpdate: (o, old, ...rest) => {
      base.prepareForUpdate(o, old, ...rest);
      ensureCleanupFinalizer(o);
    },
  };
}

/** The `/status` subresource: only the status changes. */
const statusStrategy: ResourceStrategy = {
  prepareForCreate: () => undefined,
  prepareForUpdate: (o, old) => {
    o.spec = structuredClone(old.spec);
    resetObjectMetaForStatus(o.metadata, old.metadata);
  },
  validate: () => [],
  validateUpdate: () => [],
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};

/**
 * apis.plinth.dev/v1alpha1 APIExport (kcp's apis.kcp.io APIExport): in a
 * provider tenant, the CRDs it offers to other tenants. `apiexports/content`
 * is the provider's view of every binding tenant's objects (served by
 * apisharing/export-view.rest.ts; RBAC verbs on it as kcp's).
 */
export const apiExportResource: ResourceDefinition = {
  group: APIS_GROUP,
  version: APIS_VERSION,
  resource: 'apiexports',
  singular: 'apiexport',
  kind: 'APIExport',
  listKind: 'APIExportList',
  namespaced: false,
  shortNames: [],
  categories: [],
  verbs: STANDARD_VERBS,
  subresources: [
    { name: 'status', kind: 'APIExport', group: APIS_GROUP, version: APIS_VERSION, verbs: ['get', 'patch', 'update'] },
    // Writes beyond a bound object's status (create, delete...) need a claim the binding accepted (docs/api-sharing.md).
    { name: 'content', kind: 'APIExport', group: APIS_GROUP, version: APIS_VERSION, verbs: ['create', 'delete', 'get', 'list', 'watch', 'patch', 'update'] },
  ],
  subresourceStrategies: { status: statusStrategy },
  schema: apiExportSchema,
  strategy: specStrategy(validateExport, (o) => validateExport(o)),
  table: {
    columns: [nameColumn, ageColumn],
    cells: (o: KubeObject, now: Date) => [o.metadata.name, ageCell(o.metadata.creationTimestamp, now)],
  },
  selectableFields: {},
  storageResource: APIEXPORT_STORAGE_RESOURCE,
  tracksGeneration: true,
  returnDeletedObject: false,
  nameValidation: 'subdomain',
  cachedOnEveryReplica: true,
};

/** spec.reference is immutable (as kcp's). */
function validateBindingUpdate(o: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateBinding(o);
  const now = exportReference(o);
  const was = exportReference(old);
  if (now.path !== was.path || now.name !== was.name) errs.push(fieldErrors.invalid('spec.reference', now, 'field is immutable'));
  return errs;
}

function phaseOf(o: KubeObject): string {
  return isPlainObject(o.status) && typeof o.status.phase === 'string' ? o.status.phase : '';
}

/** apis.plinth.dev/v1alpha1 APIBinding (kcp's apis.kcp.io APIBinding): in a consumer tenant, binds an APIExport of a provider tenant. */
export const apiBindingResource: ResourceDefinition = {
  group: APIS_GROUP,
  version: APIS_VERSION,
  resource: 'apibindings',
  singular: 'apibinding',
  kind: 'APIBinding',
  listKind: 'APIBindingList',
  namespaced: false,
  shortNames: [],
  categories: [],
  verbs: STANDARD_VERBS,
  subresources: [{ name: 'status', kind: 'APIBinding', group: APIS_GROUP, version: APIS_VERSION, verbs: ['get', 'patch', 'update'] }],
  subresourceStrategies: { status: statusStrategy },
  schema: apiBindingSchema,
  strategy: bindingStrategy(),
  table: {
    columns: [
      nameColumn,
      { name: 'Export', type: 'string', format: '', description: 'The bound export: <tenant>/<name>', priority: 0 },
      { name: 'Phase', type: 'string', format: '', description: 'The phase of the binding', priority: 0 },
      ageColumn,
    ],
    cells: (o: KubeObject, now: Date) => {
      const ref = exportReference(o);
      return [o.metadata.name, `${ref.path}/${ref.name}`, phaseOf(o), ageCell(o.metadata.creationTimestamp, now)];
    },
  },
  selectableFields: {},
  storageResource: APIBINDING_STORAGE_RESOURCE,
  tracksGeneration: true,
  returnDeletedObject: false,
  nameValidation: 'subdomain',
  cachedOnEveryReplica: true,
};
