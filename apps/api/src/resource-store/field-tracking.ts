import {
  type FieldManagerScope,
  type FieldSchema,
  type JsonObject,
  keepTimestampsWhenUnchanged,
  managedFieldsProblem,
  trackUpdate,
  type KubeObject,
} from '@plinth/apimachinery';
import { groupVersion, type ResourceDefinition } from '../registry/resource-definition.js';
import { objectMetaSchema } from '../schema/object-meta.schema.js';
import type { WriteContext } from './write-context.js';

/**
 * The write path's hooks into the field manager (libs/apimachinery
 * fieldmanager): managedFields are computed on the request's object before
 * mutating admission, as upstream's handlers do, so webhooks see them and
 * their own changes are not attributed to the request's manager.
 */

const ZERO_META = { creationTimestamp: null };

/** The kind's zero object: `{apiVersion, kind}` for custom resources (unstructured), the typed empty struct a built-in kind declares (ResourceDefinition.emptyObject). */
export function emptyObjectOf(def: ResourceDefinition): JsonObject {
  if (def.custom) return { apiVersion: groupVersion(def), kind: def.kind };
  return def.emptyObject?.() ?? { metadata: { ...ZERO_META } };
}

/**
 * Fields an endpoint does not write (upstream's GetResetFields): `spec` on
 * /status, `status` on the main resource of kinds with a status subresource.
 */
export function resetFieldsOf(def: ResourceDefinition, subresource: string): string[] {
  if (subresource === 'status') return ['spec'];
  if (subresource) return [];
  return def.subresources.some((s) => s.name === 'status') ? ['status'] : [];
}

const TOP_LEVEL: Record<string, FieldSchema> = { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: objectMetaSchema };
const rootSchemas = new WeakMap<FieldSchema, FieldSchema>();

/** The kind's schema with apiVersion, kind and the full ObjectMeta declared (CRD schemas may leave them out). */
function rootSchemaOf(schema: FieldSchema): FieldSchema {
  let root = rootSchemas.get(schema);
  if (!root) {
    root = { ...schema, properties: { ...TOP_LEVEL, ...schema.properties, metadata: objectMetaSchema } };
    rootSchemas.set(schema, root);
  }
  return root;
}

/** The field manager's view of a write. */
export function fieldManagerScope(ctx: Pick<WriteContext, 'def' | 'subresource'>): FieldManagerScope {
  const { def } = ctx;
  return {
    type: { schema: rootSchemaOf(def.schema), metadataSchema: objectMetaSchema },
    apiVersion: groupVersion(def),
    subresource: ctx.subresource,
    resetFields: resetFieldsOf(def, ctx.subresource),
    emptyObject: emptyObjectOf(def),
  };
}

/**
 * Records a create or update by the request's field manager in
 * `next.metadata.managedFields` (mutates `next`). Skipped for writes
 * without a manager (system writes) and for server-side apply, which has
 * computed them already.
 */
export function trackWrite(ctx: WriteContext, next: KubeObject, old: KubeObject | null): void {
  if (ctx.fieldManager === undefined || ctx.applied) return;
  trackUpdate(old as JsonObject | null, next as JsonObject, ctx.fieldManager, fieldManagerScope(ctx));
}

/** Makes a write that only moved managedFields timestamps a no-op (mutates `next`). */
export function ignoreTimestampOnlyChanges(next: KubeObject, old: KubeObject): void {
  keepTimestampsWhenUnchanged(next as JsonObject, old as JsonObject);
}

/** Upstream's warning when mutating admission leaves managedFields invalid (they are then restored). */
export const INVALID_MANAGED_FIELDS_AFTER_ADMISSION =
  '.metadata.managedFields was in an invalid state after admission; this could be caused by an outdated mutating admission controller; please fix your requests: ';

/**
 * After mutating admission: if webhooks left managedFields invalid, puts
 * back `before` and warns, as upstream's managedFields admission guard.
 * Mutates `obj`.
 */
export function guardManagedFields(ctx: WriteContext, obj: KubeObject, before: unknown): void {
  if (ctx.fieldManager === undefined) return;
  const problem = managedFieldsProblem(obj.metadata?.managedFields);
  if (!problem) return;
  if (before === undefined) delete obj.metadata.managedFields;
  else obj.metadata.managedFields = before as unknown[];
  ctx.warnings.push(INVALID_MANAGED_FIELDS_AFTER_ADMISSION + problem);
}
