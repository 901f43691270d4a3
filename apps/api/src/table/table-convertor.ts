import type { KubeObject } from '@plinth/apimachinery';
import type { ResourceDefinition } from '../registry/resource-definition.js';

/** `includeObject` of a Table request. */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** Reduces an object to PartialObjectMetadata. Does not mutate `obj`. */
export function toPartialObjectMetadata(obj: KubeObject): KubeObject {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
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
  const rows = objects.map((o) => {
    const row: Record<string, unknown> = { cells: def.table.cells(o, now) };
    if (includeObject === 'Object') row.object = o;
    else if (includeObject === 'Metadata') row.object = toPartialObjectMetadata(o);
    return row;
  });
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: withColumns ? def.table.columns : [],
    rows,
  };
}
