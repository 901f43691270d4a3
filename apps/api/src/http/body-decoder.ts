import { DecodeError } from '../decoding/decode-error.js';
import { parseJsonStrict } from '../decoding/strict-json.js';
import { findUnknownFields } from '../decoding/unknown-fields.js';
import { parseYamlStrict } from '../decoding/yaml-decode.js';
import { ApiError } from '../errors/api-error.js';
import { isPlainObject, type KubeObject } from '../registry/kube-object.js';
import { groupVersion, type ResourceDefinition } from '../registry/resource-definition.js';
import type { StructuralSchema } from '../schema/structural-schema.js';

/** A media type without parameters, lower-cased: `application/json`. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0].trim().toLowerCase();
}

const ACCEPTED = 'application/json, application/yaml';

/**
 * Parses a body as JSON or YAML (by Content-Type; JSON when absent) and
 * reports duplicate keys. Throws ApiError 415 for other media types and 400
 * for undecodable bodies.
 */
export function parseBody(raw: Buffer | undefined, contentType: string | undefined): { value: unknown; duplicates: string[] } {
  const mt = mediaType(contentType);
  const text = raw ? raw.toString('utf8') : '';
  try {
    if (mt === '' || mt === 'application/json' || mt === '*/*') return parseJsonStrict(text);
    if (mt === 'application/yaml' || mt === 'application/x-yaml' || mt === 'text/yaml') return parseYamlStrict(text);
  } catch (err) {
    if (err instanceof DecodeError) throw ApiError.badRequest(err.message);
    throw err;
  }
  throw ApiError.unsupportedMediaType(
    `the body of the request was in an unknown format - accepted media types include: ${ACCEPTED}`,
  );
}

/**
 * Applies field validation to the decoded object: Ignore drops nothing and
 * says nothing; Warn adds one warning per unknown or duplicate field; Strict
 * throws 400 `strict decoding error: …` listing them all. Unknown fields are
 * then removed (typed objects cannot hold them). Mutates `obj`.
 */
export function applyFieldValidation(
  obj: Record<string, unknown>,
  duplicates: string[],
  schema: StructuralSchema,
  mode: 'Ignore' | 'Warn' | 'Strict',
  warnings: string[],
  prune: (obj: Record<string, unknown>) => void,
): void {
  if (mode === 'Ignore') {
    prune(obj);
    return;
  }
  const unknown = findUnknownFields(obj, schema);
  const problems = [...unknown.map((f) => `unknown field "${f}"`), ...duplicates.map((f) => `duplicate field "${f}"`)];
  if (problems.length > 0) {
    if (mode === 'Strict') throw ApiError.badRequest(`strict decoding error: ${problems.join(', ')}`);
    warnings.push(...problems);
  }
  prune(obj);
}

/**
 * Checks apiVersion/kind of a decoded body against `def` and that it is an
 * object. Throws ApiError 400 as upstream's decoder does.
 */
export function checkTypeMeta(value: unknown, def: ResourceDefinition): KubeObject {
  if (!isPlainObject(value)) {
    throw ApiError.badRequest(`the body of the request must be a JSON object describing a ${def.kind}`);
  }
  const gv = groupVersion(def);
  if (value.apiVersion !== undefined && value.apiVersion !== gv) {
    throw ApiError.badRequest(
      `the API version in the data (${String(value.apiVersion)}) does not match the expected API version (${gv})`,
    );
  }
  if (value.kind !== undefined && value.kind !== def.kind) {
    throw ApiError.badRequest(
      `${String(value.kind)} in version "${def.version}" cannot be handled as a ${def.kind}: no kind "${String(value.kind)}" is registered for version "${gv}"`,
    );
  }
  if (value.metadata !== undefined && !isPlainObject(value.metadata)) {
    throw ApiError.badRequest(
      `${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: json: cannot unmarshal ${typeof value.metadata} into Go struct field ${def.kind}.metadata of type v1.ObjectMeta`,
    );
  }
  if (value.metadata === undefined) value.metadata = {};
  return value as KubeObject;
}
