import { compareStrings } from '../text/go-strings.js';

/**
 * Sets of field paths, as server-side apply tracks ownership: a tree whose
 * edges are path elements in their FieldsV1 spelling (`f:name`,
 * `k:{"name":"a"}`, `v:"x"`, `i:0`). A node records which of its child
 * elements are members of the set (the path ends there) and which have
 * members further down; one element may be both.
 */

/** A path: path elements in their FieldsV1 spelling, root first. */
export type FieldPath = readonly string[];

/** A mutable set of field paths. Operations that return a set never mutate their inputs. */
export class PathSet {
  readonly members = new Set<string>();
  readonly children = new Map<string, PathSet>();

  /** Adds `path` (a no-op for the empty path, which names the root). Mutates this set. */
  insert(path: FieldPath): this {
    if (path.length === 0) return this;
    let node: PathSet = this;
    for (let i = 0; i < path.length - 1; i++) node = node.child(path[i]);
    node.members.add(path[path.length - 1]);
    return this;
  }

  /** The subtree under `pe`, created when missing. Mutates this set. */
  child(pe: string): PathSet {
    let c = this.children.get(pe);
    if (!c) {
      c = new PathSet();
      this.children.set(pe, c);
    }
    return c;
  }

  /** Whether `path` is a member. */
  has(path: FieldPath): boolean {
    let node: PathSet | undefined = this;
    for (let i = 0; i < path.length - 1 && node; i++) node = node.children.get(path[i]);
    return !!node && path.length > 0 && node.members.has(path[path.length - 1]);
  }

  /** True when no path is a member. */
  empty(): boolean {
    if (this.members.size > 0) return false;
    for (const c of this.children.values()) if (!c.empty()) return false;
    return true;
  }

  /** A deep copy. */
  clone(): PathSet {
    const out = new PathSet();
    for (const m of this.members) out.members.add(m);
    for (const [pe, c] of this.children) out.children.set(pe, c.clone());
    return out;
  }

  /** Members of this set or of `other`. */
  union(other: PathSet): PathSet {
    const out = this.clone();
    out.addAll(other);
    return out;
  }

  /** Adds every member of `other`. Mutates this set. */
  addAll(other: PathSet): this {
    for (const m of other.members) this.members.add(m);
    for (const [pe, c] of other.children) this.child(pe).addAll(c);
    return this;
  }

  /** Members of this set that are not members of `other` (descendants of a removed member stay). */
  difference(other: PathSet): PathSet {
    const out = new PathSet();
    for (const m of this.members) if (!other.members.has(m)) out.members.add(m);
    for (const [pe, c] of this.children) {
      const o = other.children.get(pe);
      const d = o ? c.difference(o) : c.clone();
      if (!d.empty()) out.children.set(pe, d);
    }
    return out;
  }

  /** Members of both sets. */
  intersection(other: PathSet): PathSet {
    const out = new PathSet();
    for (const m of this.members) if (other.members.has(m)) out.members.add(m);
    for (const [pe, c] of this.children) {
      const o = other.children.get(pe);
      if (!o) continue;
      const i = c.intersection(o);
      if (!i.empty()) out.children.set(pe, i);
    }
    return out;
  }

  /** This set without the members under (or at) the top-level elements `prefixes`. */
  withoutPrefixes(prefixes: readonly string[]): PathSet {
    if (prefixes.length === 0) return this;
    const out = this.clone();
    for (const p of prefixes) {
      out.members.delete(p);
      out.children.delete(p);
    }
    return out;
  }

  /** Every member path, in FieldsV1 order (depth first, elements sorted). */
  paths(): FieldPath[] {
    const out: FieldPath[] = [];
    const walk = (node: PathSet, prefix: string[]): void => {
      for (const pe of sortedElements(node)) {
        const p = [...prefix, pe];
        if (node.members.has(pe)) out.push(p);
        const c = node.children.get(pe);
        if (c) walk(c, p);
      }
    };
    walk(this, []);
    return out;
  }

  /** True when both sets have the same members. */
  equals(other: PathSet): boolean {
    return this.difference(other).empty() && other.difference(this).empty();
  }
}

/** The elements a node mentions (members and children), sorted as upstream orders path elements. */
export function sortedElements(node: PathSet): string[] {
  const all = [...node.members];
  for (const k of node.children.keys()) if (!node.members.has(k)) all.push(k);
  return all.sort(comparePathElements);
}

const KIND_ORDER: Record<string, number> = { f: 0, k: 1, v: 2, i: 3 };

/**
 * Orders path elements as structured-merge-diff does: field names, then
 * keys, then values, then indexes; within each, by content.
 */
export function comparePathElements(a: string, b: string): number {
  const ka = KIND_ORDER[a[0]] ?? 4;
  const kb = KIND_ORDER[b[0]] ?? 4;
  if (ka !== kb) return ka - kb;
  if (ka === 0) return compareStrings(a, b);
  const ra = a.slice(2);
  const rb = b.slice(2);
  switch (a[0]) {
    case 'f':
      return compareStrings(ra, rb);
    case 'i':
      return Number(ra) - Number(rb);
    case 'k':
      return compareKeys(parseJson(ra), parseJson(rb));
    default:
      return compareValues(parseJson(ra), parseJson(rb));
  }
}

function parseJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}


function compareKeys(a: unknown, b: unknown): number {
  const fa = Object.entries((a ?? {}) as Record<string, unknown>).sort(([x], [y]) => compareStrings(x, y));
  const fb = Object.entries((b ?? {}) as Record<string, unknown>).sort(([x], [y]) => compareStrings(x, y));
  for (let i = 0; i < Math.min(fa.length, fb.length); i++) {
    const c = compareStrings(fa[i][0], fb[i][0]) || compareValues(fa[i][1], fb[i][1]);
    if (c !== 0) return c;
  }
  return fa.length - fb.length;
}

function rank(v: unknown): number {
  if (typeof v === 'number') return 0;
  if (typeof v === 'string') return 1;
  if (typeof v === 'boolean') return 2;
  if (Array.isArray(v)) return 3;
  if (v !== null && typeof v === 'object') return 4;
  return 5;
}

/** Upstream's total order of values: numbers, strings, booleans, lists, maps, null. */
export function compareValues(a: unknown, b: unknown): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  switch (ra) {
    case 0:
      return (a as number) - (b as number);
    case 1:
      return compareStrings(a as string, b as string);
    case 2:
      return Number(a) - Number(b);
    case 3: {
      const la = a as unknown[];
      const lb = b as unknown[];
      for (let i = 0; i < Math.min(la.length, lb.length); i++) {
        const c = compareValues(la[i], lb[i]);
        if (c !== 0) return c;
      }
      return la.length - lb.length;
    }
    case 4:
      return compareKeys(a, b);
    default:
      return 0;
  }
}
