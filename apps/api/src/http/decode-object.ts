import { pruneUnknownFields } from '@plinth/apimachinery';
import { ApiError } from '@plinth/apimachinery';
import { applyFieldValidation, checkTypeMeta, parseBody } from './body-decoder.js';
import type { KubeObject } from '@plinth/apimachinery';
import { groupVersion, type ResourceDefinition } from '../registry/resource-definition.js';
import { findTypeError, zeroNullListItems } from '@plinth/apimachinery';
import type { StructuralSchema } from '@plinth/apimachinery';

/**
 * Removes fields the schema does not declare from a typed object, as
 * decoding into a Go struct does. Mutates `obj`.
 */
export function dropUndeclared(obj: Record<string, unknown>, schema: StructuralSchema): void {
  const { pruned } = pruneUnknownFields(obj, schema);
  for (const k of Object.keys(obj)) delete obj[k];
  Object.assign(obj, pruned as Record<string, unknown>);
}

/** Throws 400 like upstream's decoder when a typed object has a field of the wrong JSON type. */
export function checkTypes(obj: unknown, def: ResourceDefinition): void {
  const err = findTypeError(obj, def.schema, def.kind);
  if (err) throw ApiError.badRequest(`${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: ${err}`);
  if (!def.custom) zeroNullListItems(obj, def.schema);
}

/**
 * Decodes a create/update body into a typed object of `def`: media type,
 * syntax, apiVersion/kind, JSON types, then field validation per `mode`
 * (warnings appended to `warnings`); CBOR bodies only when `cbor` (the
 * CBORServingAndStorage gate). Throws ApiError 400/415.
 */
export function decodeObject(
  raw: Buffer | undefined,
  contentType: string | undefined,
  def: ResourceDefinition,
  mode: 'Ignore' | 'Warn' | 'Strict',
  warnings: string[],
  cbor = false,
): KubeObject {
  if (!raw || raw.length === 0) throw ApiError.badRequest('the request body is empty; expected an object');
  const body = parseBody(raw, contentType, def.kind, def.version, groupVersion(def), cbor);
  const obj = checkTypeMeta(body.value, def);
  if (def.custom) {
    // Custom resources are schema-checked by validation (422), not as Go types; unknown fields are pruned.
    def.custom.decode(obj, body, mode, warnings);
    return obj;
  }
  checkTypes(obj, def);
  // Upstream wraps decode errors of typed objects this way (handlers/create.go transformDecodeError).
  const prefix = `${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: `;
  applyFieldValidation(obj, body, def.schema, mode, warnings, (o) => dropUndeclared(o, def.schema), prefix);
  return obj;
}
