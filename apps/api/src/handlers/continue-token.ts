import type { ListCursor } from '@plinth/storage';
import { ApiError } from '@plinth/apimachinery';

/** A decoded continue token: the list's revision (-1: newest) and the last key returned. */
export interface ContinueToken {
  rv: number;
  after: ListCursor;
}

/** Encodes a token in upstream's shape: base64 of {"v":"meta.k8s.io/v1","rv":…,"start":…}. */
export function encodeContinue(rv: number, after: ListCursor): string {
  const start = `${after.namespace}/${after.name}\u0000`;
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start })).toString('base64url');
}

/** Decodes a token; throws ApiError 400 for anything malformed. */
export function decodeContinue(token: string): ContinueToken {
  const bad = () => ApiError.badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  const p = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (p.v !== 'meta.k8s.io/v1' || typeof p.rv !== 'number' || !Number.isInteger(p.rv) || typeof p.start !== 'string') throw bad();
  if (p.rv === 0 || p.rv < -1 || !Number.isSafeInteger(p.rv)) throw bad();
  const start = p.start.endsWith('\u0000') ? p.start.slice(0, -1) : p.start;
  // A key can never hold a NUL (nor can PostgreSQL text): such a token was not made by this server.
  if (start.includes('\u0000')) throw bad();
  const slash = start.indexOf('/');
  if (slash < 0) throw bad();
  return { rv: p.rv, after: { namespace: start.slice(0, slash), name: start.slice(slash + 1) } };
}
