import { fieldErrorMessage, isPlainObject, type KubeObject, validateObjectMeta } from '@plinth/apimachinery';

/**
 * ConversionReview (apiextensions.k8s.io/v1 and v1beta1) as
 * apiextensions-apiserver's webhook converter builds and checks it: the
 * request, the verification of the response (kind, uid, result), and the
 * checks on every converted object (apiVersion the desired one, same kind,
 * name, namespace and uid; metadata restored from the original except
 * labels and annotations, which must stay valid). Pure; every failure is
 * a {@link ConversionError} whose message is upstream's text after
 * `conversion webhook for <gvk> `.
 */

/** The ConversionReview versions Plinth speaks, in upstream's order of preference as listed by the CRD. */
export const CONVERSION_REVIEW_VERSIONS = ['v1', 'v1beta1'];

/** A failed conversion; `message` is the whole upstream text (`conversion webhook for … failed: …`). */
export class ConversionError extends Error {}

/** The first of the CRD's conversionReviewVersions Plinth speaks, or undefined. */
export function reviewVersionOf(versions: readonly string[]): string | undefined {
  return versions.find((v) => CONVERSION_REVIEW_VERSIONS.includes(v));
}

/** The request body of one conversion call. */
export function buildConversionReview(version: string, uid: string, desiredAPIVersion: string, objects: KubeObject[]): Record<string, unknown> {
  return {
    kind: 'ConversionReview',
    apiVersion: `apiextensions.k8s.io/${version}`,
    request: { uid, desiredAPIVersion, objects },
  };
}

/**
 * The convertedObjects of a parsed response, or a text saying why there
 * are none (upstream getConvertedObjectsFromResponse): v1 answers must be
 * a v1 ConversionReview with the request's uid; v1beta1 ones are not
 * checked for kind or uid, as upstream. Throws Error with the reason.
 */
export function convertedObjectsOf(version: string, uid: string, parsed: unknown): unknown[] {
  const review = isPlainObject(parsed) ? parsed : {};
  if (version === 'v1') {
    const got = `${String(review.apiVersion ?? '')}, Kind=${String(review.kind ?? '')}`;
    if (review.apiVersion !== 'apiextensions.k8s.io/v1' || review.kind !== 'ConversionReview') {
      throw new Error(`expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got ${got}`);
    }
  }
  const response = review.response;
  if (!isPlainObject(response)) throw new Error('no response provided');
  if (version === 'v1' && response.uid !== uid) throw new Error(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(String(response.uid ?? ''))}`);
  const result = isPlainObject(response.result) ? response.result : {};
  if (result.status !== 'Success') {
    if (typeof result.message === 'string' && result.message.length > 0) throw new Error(result.message);
    throw new Error(`response.result.status was '${String(result.status ?? '')}', not 'Success'`);
  }
  return Array.isArray(response.convertedObjects) ? response.convertedObjects : [];
}

function same(field: string, a: unknown, b: unknown): void {
  if ((a ?? '') !== (b ?? '')) throw new Error(`must have the same ${field}: ${String(a ?? '')} != ${String(b ?? '')}`);
}

/** upstream validateConvertedObject: kind, name, namespace and UID unchanged. */
function validateConverted(original: KubeObject, converted: KubeObject): void {
  same('kind', original.kind, converted.kind);
  same('name', original.metadata?.name, converted.metadata?.name);
  same('namespace', original.metadata?.namespace, converted.metadata?.namespace);
  same('UID', original.metadata?.uid, converted.metadata?.uid);
}

/**
 * upstream restoreObjectMeta: the original's metadata, with the converted
 * object's labels and annotations (which must be string maps and, when
 * changed, valid). Mutates `converted`.
 */
function restoreObjectMeta(original: KubeObject, converted: KubeObject): void {
  const answered = converted.metadata as unknown;
  if (answered === undefined) throw new Error('missing metadata in converted object');
  if (!isPlainObject(answered)) throw new Error(`invalid metadata of type ${typeof answered} in converted object`);
  const meta: Record<string, unknown> = structuredClone(original.metadata ?? {});
  let changed = false;
  for (const field of ['labels', 'annotations'] as const) {
    const value = answered[field];
    if (value === undefined || value === null) {
      if (meta[field] !== undefined) changed = true;
      delete meta[field];
      continue;
    }
    if (!isPlainObject(value)) throw new Error(`invalid metadata.${field} of type ${Array.isArray(value) ? 'array' : typeof value} in converted object`);
    const before = isPlainObject(meta[field]) ? (meta[field] as Record<string, unknown>) : {};
    for (const [k, v] of Object.entries(value)) {
      if (typeof v !== 'string') throw new Error(`metadata.${field}[${k}] must be a string, but is ${v === null ? 'nil' : typeof v} in converted object`);
      if (before[k] !== v) changed = true;
    }
    if (Object.keys(before).length !== Object.keys(value).length) changed = true;
    meta[field] = value;
  }
  if (changed) {
    const errs = validateObjectMeta({ name: 'x', labels: meta.labels, annotations: meta.annotations } as KubeObject['metadata'], { namespaced: false, nameValidation: 'subdomain' }).filter(
      (e) => e.field.startsWith('metadata.labels') || e.field.startsWith('metadata.annotations'),
    );
    if (errs.length > 0) throw new Error(errs.length === 1 ? fieldErrorMessage(errs[0]) : `[${errs.map(fieldErrorMessage).join(', ')}]`);
  }
  converted.metadata = meta as KubeObject['metadata'];
}

/**
 * Checks the webhook's converted objects against the originals and returns
 * them with metadata restored (upstream webhookConverter.Convert after the
 * call). `gvk` is the text upstream names the input by
 * (`example.com/v1, Kind=Widget`, or the list kind for a list); `list`
 * selects upstream's list wording. Throws ConversionError.
 */
export function checkConvertedObjects(originals: KubeObject[], answered: unknown[], desiredAPIVersion: string, gvk: string, list: boolean): KubeObject[] {
  if (answered.length !== originals.length) {
    throw new ConversionError(`conversion webhook for ${gvk} returned ${answered.length} objects, expected ${originals.length}`);
  }
  return originals.map((original, i) => {
    const raw = answered[i];
    const at = list ? `converted object at index ${i}` : `object at index ${i}`;
    if (!isPlainObject(raw)) throw new ConversionError(`conversion webhook for ${gvk} returned invalid ${at}: Object 'Kind' is missing in '${JSON.stringify(raw)}'`);
    const converted = raw as KubeObject;
    if (converted.apiVersion !== desiredAPIVersion) {
      throw new ConversionError(`conversion webhook for ${gvk} returned invalid ${at}: invalid groupVersion (expected ${desiredAPIVersion}, received ${String(converted.apiVersion ?? '')})`);
    }
    if (converted.kind !== original.kind) {
      throw new ConversionError(`conversion webhook for ${gvk} returned invalid ${at}: invalid kind (expected ${original.kind}, received ${String(converted.kind ?? '')})`);
    }
    try {
      validateConverted(original, converted);
    } catch (err) {
      throw new ConversionError(`conversion webhook for ${gvk} returned invalid ${list ? at : 'object'}: ${(err as Error).message}`);
    }
    try {
      restoreObjectMeta(original, converted);
    } catch (err) {
      throw new ConversionError(`conversion webhook for ${gvk} returned invalid metadata${list ? ` in object at index ${i}` : ''}: ${(err as Error).message}`);
    }
    return converted;
  });
}
