import type { ChangeEvent } from '../change-log.repository.js';

const TYPE_CODES = { ADDED: 'A', MODIFIED: 'M', DELETED: 'D' } as const;
const CODE_TYPES: Record<string, ChangeEvent['type']> = { A: 'ADDED', M: 'MODIFIED', D: 'DELETED' };

/** The Redis stream entry id of a change: its revision, so ids order and deduplicate like revisions. */
export function streamId(revision: number): string {
  return `${revision}-0`;
}

/** The revision of a stream entry id, or NaN when the id is not one Plinth wrote. */
export function revisionOfStreamId(id: string): number {
  const dash = id.indexOf('-');
  return Number(dash < 0 ? id : id.slice(0, dash));
}

/** Serializes a change for the stream (one field). */
export function encodeChange(c: ChangeEvent): string {
  return JSON.stringify({ k: [c.key.tenant, c.key.resource, c.key.namespace, c.key.name], t: TYPE_CODES[c.type], o: c.object, p: c.prevObject });
}

/** Parses a stream entry back into a change. Throws on a malformed entry. */
export function decodeChange(id: string, payload: string): ChangeEvent {
  const w = JSON.parse(payload) as { k: [string, string, string, string]; t: string; o: Record<string, unknown>; p: Record<string, unknown> | null };
  const revision = revisionOfStreamId(id);
  const type = CODE_TYPES[w.t];
  if (!Number.isSafeInteger(revision) || !type || !Array.isArray(w.k)) throw new Error(`malformed change stream entry ${id}`);
  return {
    revision,
    key: { tenant: w.k[0], resource: w.k[1], namespace: w.k[2], name: w.k[3] },
    type,
    object: w.o,
    prevObject: w.p ?? null,
  };
}
