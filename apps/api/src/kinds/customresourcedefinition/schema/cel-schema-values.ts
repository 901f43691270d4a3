import { LRUCache } from 'lru-cache';
import { Duration } from '@marcbachmann/cel-js/evaluator';
import { celMap, jsonToCel } from '@plinth/cel';
import { isPlainObject } from '@plinth/apimachinery';
import type { StructuralSchema } from '@plinth/apimachinery';

/**
 * JSON values as CEL sees them under a CRD schema, as Kubernetes'
 * UnstructuredToVal does: `integer` → int, `number` → double,
 * `int-or-string` → int or string, `format: byte` → bytes, `date-time` →
 * timestamp, `duration` → duration; object properties under their escaped
 * CEL names (`namespace` → `__namespace__`, `a-b` → `a__dash__b`); the root
 * and embedded resources expose apiVersion, kind and metadata.name /
 * generateName only. A converter memoizes per input object so nested rules
 * reuse their parents' conversion.
 */

const RESERVED = new Set([
  'true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop',
  'package', 'namespace', 'return', 'var', 'void', 'while',
]);

/** Kubernetes' CEL property-name escaping; undefined when the name is not accessible from CEL. */
export function escapeCelName(name: string): string | undefined {
  if (name.length === 0 || /^[0-9]/.test(name)) return undefined;
  if (RESERVED.has(name)) return `__${name}__`;
  if (!/^[a-zA-Z0-9_./-]+$/.test(name)) return undefined;
  return name.replace(/__|[./-]/g, (m) => (m === '__' ? '__underscores__' : m === '.' ? '__dot__' : m === '-' ? '__dash__' : '__slash__'));
}

/** Escaped property names (tenant schemas choose them, so the cache is bounded; least recently used go first). */
const escapeCache = new LRUCache<string, { name: string | undefined }>({ max: 10_000 });
function escaped(name: string): string | undefined {
  let hit = escapeCache.get(name);
  if (!hit) escapeCache.set(name, (hit = { name: escapeCelName(name) }));
  return hit.name;
}

function parseDuration(s: string): Duration | string {
  try {
    const m = /^([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))+$/.exec(s);
    if (!m) return s;
    let nanos = 0;
    for (const part of s.replace(/^[-+]/, '').matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/g)) {
      const unit = { ns: 1, us: 1e3, µs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 }[part[2]] as number;
      nanos += Number(part[1]) * unit;
    }
    const total = BigInt(Math.round(m[1] === '-' ? -nanos : nanos));
    return new Duration(total / 1_000_000_000n, Number(total % 1_000_000_000n));
  } catch {
    return s;
  }
}

function convertString(v: string, s: StructuralSchema | undefined): unknown {
  switch (s?.format) {
    case 'byte':
      return /^[A-Za-z0-9+/]*={0,2}$/.test(v) ? new Uint8Array(Buffer.from(v, 'base64')) : v;
    case 'date-time':
    case 'datetime':
    case 'date': {
      const t = Date.parse(v);
      return Number.isNaN(t) ? v : new Date(t);
    }
    case 'duration':
      return parseDuration(v);
    default:
      return v;
  }
}

/**
 * The entries of an embedded resource as CEL sees them: its apiVersion, kind and only name and generateName of its
 * metadata (no metadata entry when it has none), in place of whatever the properties gave. Pure.
 */
function withResourceMeta(v: Record<string, unknown>, entries: Array<[string, unknown]>): Array<[string, unknown]> {
  const out = entries.filter(([k]) => !(k === 'metadata' || (k === 'apiVersion' && typeof v.apiVersion === 'string') || (k === 'kind' && typeof v.kind === 'string')));
  if (typeof v.apiVersion === 'string') out.push(['apiVersion', v.apiVersion]);
  if (typeof v.kind === 'string') out.push(['kind', v.kind]);
  if (isPlainObject(v.metadata)) {
    const meta: Record<string, unknown> = {};
    if (typeof v.metadata.name === 'string') meta.name = v.metadata.name;
    if (typeof v.metadata.generateName === 'string') meta.generateName = v.metadata.generateName;
    out.push(['metadata', meta]);
  }
  return out;
}

/** Converts values under one validation; memoizes objects and arrays by identity. */
export class CelValueConverter {
  private readonly memo = new WeakMap<object, unknown>();

  /** `v` as a CEL value under `s`; `resource` marks the root or an embedded resource. */
  convert(v: unknown, s: StructuralSchema | undefined, resource = false): unknown {
    if (v === null || v === undefined) return v ?? null;
    if (typeof v === 'number') {
      if (s?.type === 'number') return v;
      if (s?.type === 'integer' || s?.['x-kubernetes-int-or-string']) return Number.isInteger(v) ? BigInt(v) : v;
      return Number.isInteger(v) ? BigInt(v) : v;
    }
    if (typeof v === 'string') return convertString(v, s);
    if (typeof v !== 'object') return v;
    const hit = this.memo.get(v);
    if (hit !== undefined) return hit;
    let out: unknown;
    if (Array.isArray(v)) out = v.map((x) => this.convert(x, s?.items, s?.items?.['x-kubernetes-embedded-resource'] === true));
    else out = this.object(v as Record<string, unknown>, s, resource || s?.['x-kubernetes-embedded-resource'] === true);
    this.memo.set(v, out);
    return out;
  }

  private object(v: Record<string, unknown>, s: StructuralSchema | undefined, resource: boolean): unknown {
    const out: Array<[string, unknown]> = [];
    if (!s || (!s.properties && s.additionalProperties === undefined && s['x-kubernetes-preserve-unknown-fields'])) {
      for (const [k, x] of Object.entries(v)) out.push([k, jsonToCel(x)]);
      return celMap(resource ? withResourceMeta(v, out) : out);
    }
    const additional = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
    for (const [k, x] of Object.entries(v)) {
      if (s.properties && Object.hasOwn(s.properties, k)) {
        const name = escaped(k);
        if (name !== undefined) out.push([name, this.convert(x, s.properties[k], s.properties[k]['x-kubernetes-embedded-resource'] === true)]);
      } else if (additional) out.push([k, this.convert(x, additional, additional['x-kubernetes-embedded-resource'] === true)]);
      else if (s.additionalProperties === true || s['x-kubernetes-preserve-unknown-fields']) out.push([k, jsonToCel(x)]);
    }
    return celMap(resource ? withResourceMeta(v, out) : out);
  }

}
