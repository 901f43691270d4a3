/** Identifies one stored object. `namespace` is '' for cluster-scoped objects. */
export interface ObjectKey {
  tenant: string;
  /** Group-qualified resource, e.g. `configmaps` or `widgets.example.com`. */
  resource: string;
  namespace: string;
  name: string;
}

/** `key` as one string, for maps keyed by object (NUL cannot occur in any of its parts). */
export function objectKeyId(key: ObjectKey): string {
  return `${key.tenant}\0${key.resource}\0${key.namespace}\0${key.name}`;
}

/** An object as read from storage; `body.metadata.resourceVersion` is set to `revision`. */
export interface StoredObject {
  key: ObjectKey;
  revision: number;
  body: Record<string, unknown>;
  /**
   * Set by reads of one object: true when its stored form was not written
   * by its resource's first encryption provider (see isStaleBody), so an
   * update must rewrite it even when nothing changed.
   */
  stale?: boolean;
}

/**
 * Returns a shallow copy of `body` whose metadata carries `resourceVersion`.
 * Bodies are stored without it, since the revision is only known inside the
 * write. Does not mutate `body`.
 */
export function withResourceVersion(body: Record<string, unknown>, revision: number): Record<string, unknown> {
  const metadata = { ...((body.metadata as Record<string, unknown>) ?? {}), resourceVersion: String(revision) };
  return { ...body, metadata };
}

/** Returns a copy of `body` without metadata.resourceVersion, the form that is stored. */
export function withoutResourceVersion(body: Record<string, unknown>): Record<string, unknown> {
  const meta = body.metadata as Record<string, unknown> | undefined;
  if (!meta || !('resourceVersion' in meta)) return body;
  const { resourceVersion: _drop, ...rest } = meta;
  return { ...body, metadata: rest };
}

/**
 * Compares two strings in the order of their UTF-8 bytes (code point order),
 * which is how the "C" collation of PostgreSQL sorts keys, without encoding
 * them. UTF-16 code units order the same except that a surrogate (part of a
 * character above U+FFFF) sorts below U+E000–U+FFFF; those are remapped.
 */
export function compareByteOrder(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** A UTF-16 code unit's rank in code point order: surrogates above the rest of the BMP. */
function codePointRank(unit: number): number {
  if (unit < 0xd800) return unit;
  return unit >= 0xe000 ? unit - 0x800 : unit + 0x2000;
}
