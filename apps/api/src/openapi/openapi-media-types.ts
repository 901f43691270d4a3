import type { PlannedOperation } from './openapi-operations.js';

const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml'];

/** The media types a PATCH accepts; strategic merge patch only for built-in groups, as upstream. */
export function patchMediaTypes(op: Pick<PlannedOperation, 'builtin'>): string[] {
  return op.builtin ? [...PATCH_TYPES] : PATCH_TYPES.filter((t) => t !== 'application/strategic-merge-patch+json');
}

/**
 * The media types an operation's responses come in, in upstream's v2
 * `produces` order. Plinth does not encode objects as protobuf, so it is not
 * advertised.
 */
export function responseMediaTypes(op: Pick<PlannedOperation, 'builtin' | 'streams'>): string[] {
  const types = ['application/json', 'application/yaml'];
  if (op.streams) types.push('application/json;stream=watch');
  return types;
}
