import { createHash } from 'node:crypto';
import { ApiError } from '@plinth/apimachinery';

/**
 * A position in the provider's view of an APIExport across shards: one
 * revision per shard (revisions are allocated per shard, in commit order),
 * and a digest of the binding tenants the position covers. On an object
 * (`object`) it also names the revision of that object on its shard, which
 * the view's writes hand to the tenant's store.
 */
export interface ViewCursor {
  /** Shard name → the revision of that shard up to which everything was shown. */
  shards: Map<string, number>;
  /** {@link tenantsDigest} of the binding tenants addressed when the position was reached. */
  tenants: string;
  /** The object's own revision on its shard (objects of lists and watch events only). */
  object?: { shard: string; revision: number };
}

const VERSION = 'v1';
const SHARD_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DIGEST = /^[0-9a-f]{12}$/;
const REVISION = /^(0|[1-9][0-9]{0,15})$/;

/** A short digest of a set of tenant names (order does not matter). Pure. */
export function tenantsDigest(tenants: readonly string[]): string {
  return createHash('sha256').update([...tenants].sort().join('\n')).digest('hex').slice(0, 12);
}

/**
 * The resourceVersion of `c`: base64url (no padding) of
 * `v1|<digest>|<shard>=<revision>,…[|<shard>=<revision>]`, shards in name
 * order. Canonical: one cursor has one encoding. Pure.
 */
export function encodeCursor(c: ViewCursor): string {
  const vector = [...c.shards.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([s, r]) => `${s}=${r}`)
    .join(',');
  const parts = [VERSION, c.tenants, vector];
  if (c.object) parts.push(`${c.object.shard}=${c.object.revision}`);
  return Buffer.from(parts.join('|'), 'utf8').toString('base64url');
}

/** The shard and revision of `text` (`<shard>=<revision>`), or undefined when it is not one. */
function shardRevision(text: string): [string, number] | undefined {
  const eq = text.indexOf('=');
  if (eq < 0) return undefined;
  const shard = text.slice(0, eq);
  const rev = text.slice(eq + 1);
  if (!SHARD_NAME.test(shard) || !REVISION.test(rev)) return undefined;
  const n = Number(rev);
  return Number.isSafeInteger(n) ? [shard, n] : undefined;
}

/** The cursor `rv` encodes, or undefined when it is not exactly a cursor {@link encodeCursor} makes. Pure. */
export function parseCursor(rv: string): ViewCursor | undefined {
  if (rv === '' || rv.length > 8192 || !/^[A-Za-z0-9_-]+$/.test(rv)) return undefined;
  const text = Buffer.from(rv, 'base64url').toString('utf8');
  const parts = text.split('|');
  if ((parts.length !== 3 && parts.length !== 4) || parts[0] !== VERSION || !DIGEST.test(parts[1])) return undefined;
  const shards = new Map<string, number>();
  if (parts[2] !== '') {
    for (const entry of parts[2].split(',')) {
      const sr = shardRevision(entry);
      if (!sr || shards.has(sr[0])) return undefined;
      shards.set(sr[0], sr[1]);
    }
  }
  const cursor: ViewCursor = { shards, tenants: parts[1] };
  if (parts.length === 4) {
    const sr = shardRevision(parts[3]);
    if (!sr) return undefined;
    cursor.object = { shard: sr[0], revision: sr[1] };
  }
  // Only the canonical encoding is one: anything else was not made here (or was altered).
  return encodeCursor(cursor) === rv ? cursor : undefined;
}

/**
 * The cursor of a request's resourceVersion, as the view accepts it:
 * 400 BadRequest for anything that is not a cursor of a view (malformed),
 * 410 Expired for a plain revision (a resourceVersion of one tenant or of
 * the one-shard view of earlier versions: the client must list again).
 */
export function requireCursor(rv: string): ViewCursor {
  if (/^[0-9]+$/.test(rv)) {
    throw ApiError.gone(`too old resource version: ${rv} is a revision of one shard, not a position in this view across shards; list again`);
  }
  const c = parseCursor(rv);
  if (!c) throw ApiError.badRequest(`invalid resourceVersion "${rv.length > 64 ? `${rv.slice(0, 64)}…` : rv}": not a resourceVersion of this view`);
  return c;
}

/** Where the next page of a list of the view starts: the snapshot, the tenant, and the last key of it returned. */
export interface ViewContinue {
  /** The list's resourceVersion (a cursor): every page reads each shard at its revision there. */
  rv: string;
  cursor: ViewCursor;
  /** The binding tenant the next page starts in (tenants are listed in name order). */
  tenant: string;
  /** The last key of `tenant` returned; undefined: `tenant` starts from its first key. */
  after?: { namespace: string; name: string };
}

const CONTINUE_VERSION = 'apiexport-view/v1';

/** The continue token of a page of the view: base64url of JSON, in the shape of upstream's tokens. Pure. */
export function encodeViewContinue(rv: string, tenant: string, after?: { namespace: string; name: string }): string {
  return Buffer.from(JSON.stringify({ v: CONTINUE_VERSION, rv, tenant, start: after ? `${after.namespace}/${after.name}` : '' })).toString('base64url');
}

/** Decodes a continue token of the view; throws ApiError 400 for anything this server did not make. */
export function decodeViewContinue(token: string): ViewContinue {
  const bad = () => ApiError.badRequest(`continue key is not valid: not a continue token of this view (version ${CONTINUE_VERSION})`);
  let p: { v?: unknown; rv?: unknown; tenant?: unknown; start?: unknown };
  try {
    p = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as typeof p;
  } catch {
    throw bad();
  }
  if (!p || typeof p !== 'object' || p.v !== CONTINUE_VERSION || typeof p.rv !== 'string' || typeof p.tenant !== 'string' || typeof p.start !== 'string') throw bad();
  const cursor = parseCursor(p.rv);
  if (!cursor || cursor.object || !SHARD_NAME.test(p.tenant) || p.start.includes('\u0000')) throw bad();
  if (p.start === '') return { rv: p.rv, cursor, tenant: p.tenant };
  const slash = p.start.indexOf('/');
  if (slash < 0) throw bad();
  return { rv: p.rv, cursor, tenant: p.tenant, after: { namespace: p.start.slice(0, slash), name: p.start.slice(slash + 1) } };
}
