import { PatchError, goJsonKind } from './patch-error.js';

/** Request-level knobs that change how upstream decodes a merge patch. */
export interface MergePatchOptions {
  /** The `fieldValidation` query parameter; upstream defaults to Warn. */
  fieldValidation?: 'Ignore' | 'Warn' | 'Strict';
}

type JsonObject = Record<string, unknown>;

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Drops null members of objects and null elements of arrays, recursively, in place. */
function pruneNulls(v: unknown): unknown {
  if (Array.isArray(v)) {
    const kept = v.filter((e) => e !== null);
    kept.forEach(pruneNulls);
    return kept;
  }
  if (isObject(v)) {
    for (const [k, e] of Object.entries(v)) {
      if (e === null) delete v[k];
      else v[k] = pruneNulls(e);
    }
  }
  return v;
}

function mergeValue(cur: unknown, patch: unknown): unknown {
  // Like upstream, a patch value that replaces a non-object loses its nulls, one that replaces an object keeps them.
  if (!isObject(cur)) return pruneNulls(structuredClone(patch));
  if (!isObject(patch)) return structuredClone(patch);
  mergeObjects(cur, patch);
  return cur;
}

function mergeObjects(doc: JsonObject, patch: JsonObject): void {
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) {
      delete doc[k];
      continue;
    }
    const cur = Object.prototype.hasOwnProperty.call(doc, k) ? doc[k] : null;
    // defineProperty, because assigning a new `__proto__` member would replace the prototype instead.
    Object.defineProperty(doc, k, {
      value: cur === null ? pruneNulls(structuredClone(v)) : mergeValue(cur, v),
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
}

/**
 * Applies an RFC 7386 JSON merge patch as kube-apiserver does (evanphx
 * json-patch MergePatch): null deletes, objects merge recursively, anything
 * else replaces, and nulls inside inserted values are pruned. An array patch
 * replaces the whole document. Neither input is mutated.
 * Throws PatchError 400: `error decoding patch: …` for a non-object body
 * (unless fieldValidation is Ignore), `Invalid JSON Patch` for a null or
 * scalar body; 500 `Invalid JSON Document` when `doc` is null.
 */
export function applyMergePatch(doc: unknown, patch: unknown, options: MergePatchOptions = {}): unknown {
  const strict = (options.fieldValidation ?? 'Warn') !== 'Ignore';
  if (strict && patch !== null && patch !== undefined && !isObject(patch)) {
    throw PatchError.malformed(
      `error decoding patch: json: cannot unmarshal ${goJsonKind(patch)} into Go value of type map[string]interface {}`,
    );
  }
  // The stored document is never null: this is a server fault, not the client's (500, as upstream).
  if (doc === null || doc === undefined) throw new PatchError(500, '', 'Invalid JSON Document');
  if (patch === null || patch === undefined) throw PatchError.malformed('Invalid JSON Patch');
  if (Array.isArray(patch)) return pruneNulls(structuredClone(patch));
  if (!isObject(patch)) throw PatchError.malformed('Invalid JSON Patch');
  if (!isObject(doc)) return pruneNulls(structuredClone(patch));
  const result = structuredClone(doc);
  mergeObjects(result, patch);
  return result;
}
