import type { StructuralSchema } from '../schema/structural-schema.js';
import { type UnknownFieldOptions, fieldRule, preservesUnknown } from './unknown-fields.js';

/** Result of pruning. */
export interface PruneResult {
  /** A deep copy of the input without undeclared fields; it shares nothing with the input. */
  pruned: unknown;
  /**
   * Removed field paths with a leading dot, e.g. `.spec.foo`, `.spec.ports[0].bar`, ready for
   * `<path>: field not declared in schema`. Upstream's non-apply strict message prints them
   * without the dot: `unknown field "spec.foo"`. Order is upstream's: root metadata fields, then the
   * schema-pruned fields sorted, then fields of embedded resources' metadata, each group sorted.
   */
  removed: string[];
}

/**
 * Applies CRD pruning (apiextensions-apiserver schema/pruning) to `obj`: drops fields the structural
 * schema does not declare, keeping subtrees under x-kubernetes-preserve-unknown-fields (while still
 * pruning inside their declared properties), map entries allowed by additionalProperties, and
 * apiVersion/kind/metadata of the root and of x-kubernetes-embedded-resource objects. `metadata` is
 * kept verbatim unless `options.objectMeta` is given, in which case it is pruned against that schema
 * (upstream checks ObjectMeta separately, ignoring the CRD's own metadata schema).
 * As upstream, an object under a non-object schema loses all its keys. Does not mutate its inputs;
 * returns `removed: []` when nothing was dropped.
 */
export function pruneUnknownFields(obj: unknown, schema: StructuralSchema, options: UnknownFieldOptions = {}): PruneResult {
  const pruner = new Pruner(options);
  const pruned = pruner.prune(obj, schema, '', false, true, pruner.schemaPaths);
  const { rootMetaPaths, schemaPaths, embeddedMetaPaths } = pruner;
  const removed = [...rootMetaPaths.sort(), ...schemaPaths.sort(), ...embeddedMetaPaths.sort()].map((p) => '.' + p);
  return { pruned, removed };
}

class Pruner {
  readonly schemaPaths: string[] = [];
  readonly rootMetaPaths: string[] = [];
  readonly embeddedMetaPaths: string[] = [];

  constructor(private readonly options: UnknownFieldOptions) {}

  /** Returns the pruned copy of `value`, recording removed paths into `sink`. */
  prune(value: unknown, s: StructuralSchema | undefined, path: string, inheritedPreserve: boolean, root: boolean, sink: string[]): unknown {
    const preserve = inheritedPreserve || preservesUnknown(s);
    if (preserve && !s) return cloneJson(value);
    if (Array.isArray(value)) return value.map((item, i) => this.prune(item, s?.items, `${path}[${i}]`, preserve, false, sink));
    if (typeof value !== 'object' || value === null) return value;
    const resource = root || s?.['x-kubernetes-embedded-resource'] === true;
    const objectMeta = this.options.objectMeta;
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      const v = (value as Record<string, unknown>)[key];
      const child = path === '' ? key : `${path}.${key}`;
      const rule = fieldRule(s, key, resource, preserve);
      if (rule.kind === 'unknown') {
        sink.push(child);
      } else if (rule.kind === 'schema') {
        setOwn(out, key, this.prune(v, rule.schema, child, false, false, sink));
      } else if (rule.kind === 'metadata' && objectMeta) {
        setOwn(out, key, this.prune(v, objectMeta, child, false, false, root ? this.rootMetaPaths : this.embeddedMetaPaths));
      } else {
        setOwn(out, key, cloneJson(v));
      }
    }
    return out;
  }
}

/** Copies a JSON value deeply; non-JSON leaves are returned as they are. */
function cloneJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(cloneJson);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) setOwn(out, key, cloneJson((value as Record<string, unknown>)[key]));
  return out;
}

/** Assigns an own property even for `__proto__`, which plain assignment would treat as the prototype. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}
