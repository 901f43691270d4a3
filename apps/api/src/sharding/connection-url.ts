/**
 * Connection URLs of shards, as they may be shown: a libpq URL
 * (`postgres://user:password@host:port/db?…`) carries its password, which
 * must never reach a Shard's status, an event, a log line or an error
 * (messages are redacted with config/redact-credentials.ts).
 */

import { parseHostList, usesHostList } from '@plinth/storage';

/**
 * `host:port/database` of a libpq URL (the socket folder for a Unix
 * socket URL), without user or password; `(invalid URL)` when it does not
 * parse. Pure.
 */
export function urlHost(url: string): string {
  let u: URL;
  try {
    const list = usesHostList(url) ? parseHostList(url) : undefined;
    if (list && list.hosts.length > 1) return list.display;
    u = new URL(list ? list.urlFor(0) : url);
  } catch {
    return '(invalid URL)';
  }
  const socket = u.searchParams.get('host');
  const host = socket ?? (u.host || 'localhost');
  const port = socket && u.searchParams.get('port') ? `:${u.searchParams.get('port')}` : '';
  return `${decodeURIComponent(host)}${port}${u.pathname || ''}`;
}
