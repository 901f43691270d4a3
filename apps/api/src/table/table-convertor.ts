import type { KubeObject } from '@plinth/apimachinery';
import type { ResourceDefinition } from '../registry/resource-definition.js';

/** `includeObject` of a Table request. */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** Reduces an object to PartialObjectMetadata. Does not mutate `obj`. */
export function toPartialObjectMetadata(obj: KubeObject): KubeObject {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
}

/** One row of a Table: the object's cells and, per `includeObject`, the object or its metadata. Does not mutate `obj`. */
export function tableRow(def: ResourceDefinition, obj: KubeObject, includeObject: IncludeObject, now: Date): Record<string, unknown> {
  const row: Record<string, unknown> = { cells: def.table.cells(obj, now) };
  if (includeObject === 'Object') row.object = obj;
  else if (includeObject === 'Metadata') row.object = toPartialObjectMetadata(obj);
  return row;
}

/** A Table without its `rows` (its last key), in upstream's key order. `withColumns` false leaves columnDefinitions empty. */
export function tableEnvelope(def: ResourceDefinition, listMeta: Record<string, unknown>, withColumns = true): Record<string, unknown> {
  return { kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: listMeta, columnDefinitions: withColumns ? def.table.columns : [] };
}

/**
 * Builds a meta.k8s.io/v1 Table of `objects` with the kind's columns.
 * `withColumns` false omits columnDefinitions (later watch events). Does not
 * mutate its inputs.
 */
export function toTable(
  def: ResourceDefinition,
  objects: KubeObject[],
  includeObject: IncludeObject,
  listMeta: Record<string, unknown>,
  withColumns = true,
): Record<string, unknown> {
  const now = new Date();
  return { ...tableEnvelope(def, listMeta, withColumns), rows: objects.map((o) => tableRow(def, o, includeObject, now)) };
}
