import { LRUCache } from 'lru-cache';

/** Upstream's FieldManagerMaxLength. */
const MAX_MANAGER_LENGTH = 128;

/** Managers already derived, by User-Agent: clients send the same few on every write (bounded: the header is the client's). */
const derived = new LRUCache<string, string>({ max: 256, maxSize: 1 << 20, sizeCalculation: (manager, ua) => ua.length + manager.length + 1 });

/**
 * The default field manager of a write without `fieldManager`, as
 * upstream derives it: the User-Agent up to its first `/`, printable
 * characters only, at most 128 bytes. '' when there is no User-Agent.
 */
export function managerFromUserAgent(userAgent: string | undefined): string {
  const ua = userAgent ?? '';
  let manager = derived.get(ua);
  if (manager === undefined) {
    manager = deriveManager(ua);
    derived.set(ua, manager);
  }
  return manager;
}

/** The manager of one User-Agent, computed (see managerFromUserAgent). */
function deriveManager(userAgent: string): string {
  const prefix = userAgent.split('/')[0];
  let out = '';
  let bytes = 0;
  for (const ch of prefix) {
    if (!/^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(ch)) continue;
    const len = Buffer.byteLength(ch);
    if (bytes + len > MAX_MANAGER_LENGTH) break;
    out += ch;
    bytes += len;
  }
  return out;
}
