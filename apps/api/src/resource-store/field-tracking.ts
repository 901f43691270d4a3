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
 * What {@link guardManagedFields} restores and compares with: the entries
 * of managedFields before mutating admission, each copied one level deep
 * (its fieldsV1 shared, as upstream's guard keeps the slice it read);
 * undefined when there were none. Does not mutate `managedFields`.
 */
export interface ManagedFieldsBefore {
  array: unknown;
  entries: unknown[] | undefined;
}

/** Takes {@link ManagedFieldsBefore} of `managedFields` (read before mutating admission). */
export function managedFieldsBefore(managedFields: unknown): ManagedFieldsBefore {
  return { array: managedFields, entries: Array.isArray(managedFields) ? managedFields.map((e) => (e && typeof e === 'object' && !Array.isArray(e) ? { ...e } : e)) : undefined };
}

/**
 * Whether `after` is the array of `before`, holding the same entries with
 * the same top-level values (fieldsV1 the same object): what admission did
 * not touch, short of changing a fieldsV1 in place.
 */
function untouched(after: unknown, before: ManagedFieldsBefore): boolean {
  if (after !== before.array || !Array.isArray(after) || !before.entries || after.length !== before.entries.length) return false;
  return after.every((e, i) => {
    const b = before.entries![i];
    if (e === b) return true;
    if (!e || typeof e !== 'object' || !b || typeof b !== 'object') return false;
    const ek = Object.keys(e);
    return ek.length === Object.keys(b).length && ek.every((k) => (e as Record<string, unknown>)[k] === (b as Record<string, unknown>)[k]);
  });
}

/**
 * After mutating admission: if webhooks left managedFields invalid, puts
 * back `before` and warns, as upstream's managedFields admission guard.
 * managedFields that admission left as they were (the same array and
 * entries, as the field manager wrote or checked them just before) are not
 * decoded again: for an object of 100,000 labels that decoding was about a
 * fifth of the request's CPU. Mutates `obj`.
 */
export function guardManagedFields(ctx: WriteContext, obj: KubeObject, before: ManagedFieldsBefore): void {
  if (ctx.fieldManager === undefined) return;
  if (untouched(obj.metadata?.managedFields, before) && !ctx.applied) return;
  const problem = managedFieldsProblem(obj.metadata?.managedFields);
  if (!problem) return;
  if (before.entries === undefined) delete obj.metadata.managedFields;
  else obj.metadata.managedFields = before.entries;
  ctx.warnings.push(INVALID_MANAGED_FIELDS_AFTER_ADMISSION + problem);
}
