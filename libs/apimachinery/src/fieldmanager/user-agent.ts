/** Upstream's FieldManagerMaxLength. */
const MAX_MANAGER_LENGTH = 128;

/**
 * The default field manager of a write without `fieldManager`, as
 * upstream derives it: the User-Agent up to its first `/`, printable
 * characters only, at most 128 bytes. '' when there is no User-Agent.
 */
export function managerFromUserAgent(userAgent: string | undefined): string {
  const prefix = (userAgent ?? '').split('/')[0];
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
