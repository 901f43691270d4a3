import { stringify, parse } from 'yaml';
import type { KubeObject } from './api.js';

/** `o` without `metadata.managedFields` (folded away from the YAML view and the diff). */
export function withoutManagedFields(o: KubeObject): KubeObject {
  const { managedFields: _m, ...metadata } = o.metadata;
  return { ...o, metadata: metadata as KubeObject['metadata'] };
}

/** YAML of `o`, as kubectl prints it. */
export function toYaml(o: unknown): string {
  return stringify(o, { lineWidth: 0 });
}

/**
 * What the editor starts from: the object without the fields the server
 * owns (managedFields, resourceVersion, uid, creationTimestamp,
 * generation, status), so applying it unchanged changes nothing.
 */
export function editableYaml(o: KubeObject): string {
  const { managedFields: _m, resourceVersion: _rv, uid: _u, creationTimestamp: _c, generation: _g, ...metadata } = o.metadata;
  const { status: _s, ...rest } = o;
  return toYaml({ ...rest, metadata });
}

/** Parses the edited YAML into an apply configuration; throws with the parser's message on bad YAML or a non-object. */
export function parseApplyConfiguration(text: string): KubeObject {
  const o = parse(text) as unknown;
  if (!o || typeof o !== 'object' || Array.isArray(o)) throw new Error('the YAML must be one object');
  return o as KubeObject;
}
