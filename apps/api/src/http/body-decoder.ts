import { DecodeError, type StrictIssue, strictDecodingMessage } from '@plinth/apimachinery';
import { protobufMessageFor } from '@plinth/apimachinery';
import { decodeKubernetesProtobuf } from '@plinth/apimachinery';
import { decodeCbor, summarizeBinary } from '@plinth/apimachinery';
import { makeStorable, parseJsonStrict } from '@plinth/apimachinery';
import { findUnknownFields } from '@plinth/apimachinery';
import { parseYamlStrict } from '@plinth/apimachinery';
import { ApiError, goJsonKind } from '@plinth/apimachinery';
import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import { groupVersion, type ResourceDefinition } from '../registry/resource-definition.js';
import type { StructuralSchema } from '@plinth/apimachinery';

/** A media type without parameters, lower-cased: `application/json`. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0].trim().toLowerCase();
}

const ACCEPTED = 'application/json, application/yaml, application/vnd.kubernetes.protobuf';
const ACCEPTED_WITH_CBOR = `${ACCEPTED}, application/cbor`;

/** A decoded body: the value, its duplicate keys (JSON paths, or YAML `line N: …` texts), and its syntax. */
export interface ParsedBody {
  value: unknown;
  duplicates: string[];
  yaml: boolean;
  /** CBOR: duplicate keys were refused outright; unknown fields are reported as upstream's CBOR decoder does. */
  cbor?: boolean;
}

/** Upstream's body summary in decode errors: the first 30 bytes, with `...` when cut. */
function summarize(text: string): string {
  return text.length > 30 ? `${text.slice(0, 30)}...` : text;
}

/**
 * Upstream reads apiVersion and kind first, into Go strings: a value of
 * another JSON type (null aside, which leaves the string empty) fails the
 * decode with encoding/json's message; undefined when both are fine.
 */
function typeMetaDecodeError(value: unknown): string | undefined {
  if (!isPlainObject(value)) return undefined;
  for (const field of ['apiVersion', 'kind']) {
    const v = value[field];
    if (v !== undefined && v !== null && typeof v !== 'string') {
      return `couldn't get version/kind; json parse error: json: cannot unmarshal ${goJsonKind(v)} into Go struct field .${field} of type string`;
    }
  }
  return undefined;
}

/**
 * Parses a body as JSON, YAML, Kubernetes protobuf or (when `cbor`, the
 * CBORServingAndStorage gate) CBOR, by Content-Type (JSON when absent), and
 * reports duplicate keys. `kind` words upstream's decode errors. Throws
 * ApiError 415 for other media types and 400 for undecodable bodies.
 */
export function parseBody(raw: Buffer | undefined, contentType: string | undefined, kind: string, version: string, apiVersion = version, cbor = false): ParsedBody {
  const mt = mediaType(contentType);
  if (cbor && mt === 'application/cbor') return parseCborBody(raw ?? Buffer.alloc(0), kind, version);
  const text = raw ? raw.toString('utf8') : '';
  try {
    let parsed: ParsedBody | undefined;
    if (mt === '' || mt === 'application/json' || mt === '*/*') parsed = { ...parseJsonStrict(text), yaml: false };
    else if (mt === 'application/yaml' || mt === 'application/x-yaml' || mt === 'text/yaml') parsed = { ...parseYamlStrict(text), yaml: true };
    else if (mt === 'application/vnd.kubernetes.protobuf' && protobufMessageFor(apiVersion, kind)) {
      parsed = { value: decodeKubernetesProtobuf(raw ?? Buffer.alloc(0), { apiVersion, kind }), duplicates: [], yaml: false };
    }
    if (parsed) {
      parsed.value = makeStorable(parsed.value);
      const typeMetaError = typeMetaDecodeError(parsed.value);
      if (typeMetaError) throw new DecodeError(typeMetaError);
      return parsed;
    }
  } catch (err) {
    if (err instanceof DecodeError) {
      throw ApiError.badRequest(
        err.beforeKind
          ? `the object provided is unrecognized (must be of type ${kind}): ${err.message} (${summarize(text)})`
          : `${kind} in version "${version}" cannot be handled as a ${kind}: ${err.message}`,
      );
    }
    throw err;
  }
  throw ApiError.unsupportedMediaType(
    `the body of the request was in an unknown format - accepted media types include: ${cbor ? ACCEPTED_WITH_CBOR : ACCEPTED}`,
  );
}

/** A CBOR body, with upstream's texts for undecodable ones (the body summarised in hex). */
function parseCborBody(raw: Buffer, kind: string, version: string): ParsedBody {
  try {
    const value = makeStorable(decodeCbor(raw));
    const typeMetaError = typeMetaDecodeError(value);
    if (typeMetaError) throw new DecodeError(typeMetaError);
    return { value, duplicates: [], yaml: false, cbor: true };
  } catch (err) {
    if (!(err instanceof DecodeError)) throw err;
    throw ApiError.badRequest(
      err.beforeKind
        ? `the object provided is unrecognized (must be of type ${kind}): ${err.message} (${summarizeBinary(raw)})`
        : `${kind} in version "${version}" cannot be handled as a ${kind}: ${err.message}`,
    );
  }
}

/**
 * The index, within its map, of the first unknown field (a path such as
 * `spec.template.foo` or `spec.containers[0].foo`) in document order, as
 * upstream's CBOR decoder reports it; 0 when the path cannot be followed.
 */
function unknownFieldIndex(obj: Record<string, unknown>, path: string): number {
  const parts = path.match(/[^.[\]]+/g) ?? [];
  let node: unknown = obj;
  for (let i = 0; i < parts.length - 1 && node !== null && typeof node === 'object'; i++) node = (node as Record<string, unknown>)[parts[i]];
  if (!isPlainObject(node)) return 0;
  return Math.max(0, Object.keys(node).indexOf(parts[parts.length - 1]));
}

/**
 * Applies field validation to the decoded object: Ignore reports nothing;
 * Warn adds one warning per unknown or duplicate field; Strict throws 400
 * `strict decoding error: …` listing them all (prefixed by `strictPrefix`).
 * Unknown fields are then removed (typed objects cannot hold them) by
 * `prune`. Mutates `obj`.
 */
export function applyFieldValidation(
  obj: Record<string, unknown>,
  body: Pick<ParsedBody, 'duplicates' | 'yaml' | 'cbor'>,
  schema: StructuralSchema,
  mode: 'Ignore' | 'Warn' | 'Strict',
  warnings: string[],
  prune: (obj: Record<string, unknown>) => void,
  strictPrefix = '',
): void {
  if (mode !== 'Ignore' && body.cbor) {
    // Upstream's CBOR decoder stops at the first unknown field, named by its index in its map.
    const first = findUnknownFields(obj, schema)[0];
    if (first !== undefined) {
      const msg = `cbor: found unknown field at map element index ${unknownFieldIndex(obj, first)}`;
      if (mode === 'Strict') throw ApiError.badRequest(`${strictPrefix}strict decoding error: ${msg}`);
      warnings.push(msg);
    }
  } else if (mode !== 'Ignore') {
    const unknown = findUnknownFields(obj, schema);
    const issues: StrictIssue[] = [
      ...unknown.map((path) => ({ kind: 'unknown' as const, path })),
      ...(body.yaml ? [] : body.duplicates.map((path) => ({ kind: 'duplicate' as const, path }))),
    ];
    const yamlDuplicates = body.yaml ? body.duplicates : [];
    if (mode === 'Strict') {
      const msg = strictDecodingMessage(issues, yamlDuplicates);
      if (msg) throw ApiError.badRequest(`${strictPrefix}${msg}`);
    } else {
      warnings.push(...yamlDuplicates, ...issues.map((i) => `${i.kind} field "${i.path}"`));
    }
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
  const typeMetaError = typeMetaDecodeError(value);
  if (typeMetaError) throw ApiError.badRequest(`the object provided is unrecognized (must be of type ${def.kind}): ${typeMetaError}`);
  // A null apiVersion or kind decodes upstream as an empty string: as if absent.
  if (value.apiVersion === null) delete value.apiVersion;
  if (value.kind === null) delete value.kind;
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
