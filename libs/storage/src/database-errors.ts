/**
 * Classifies errors of the `pg` driver: which ones mean "the database cannot
 * be reached right now" (a restart, a failover, a network cut) as opposed to
 * a bug or bad input. Callers answer the former with 503 and a retry hint,
 * never with the driver's text.
 */

// SQLSTATE classes and codes that mean the connection or the server went away.
const UNAVAILABLE_SQLSTATES = new Set([
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, shutting down, recovering)
  '57P05', // idle_session_timeout
  '53300', // too_many_connections
  '58000', // system_error
  '58030', // io_error
  '25006', // read_only_sql_transaction: the session's server was demoted (a switchover)
  'PLRF1', // this primary has not been fenced after a failover yet (migration 0022)
  'PLRF2', // the revision ceiling could not be extended (migration 0022)
]);

const UNAVAILABLE_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOENT', // the Unix socket is gone while the server is down
  'EAI_AGAIN',
]);

// Messages pg and pg-pool use for a lost or unobtainable connection (they carry no code).
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /^Client has encountered a connection error and is not queryable/,
  /^Client was closed and is not queryable/,
  /^Query read timeout/,
  /^terminating connection/,
  /^the database system is (starting up|shutting down|in recovery mode)/,
  /^Cannot use a pool after calling end on the pool/,
  /^the database system is not (yet )?accepting connections/,
  /^no host of .* is (reachable|usable for target_session_attrs)/,
  /is not usable for target_session_attrs=/,
  /^connection dropped: /,
];

/**
 * True when `err` (or its `cause`) says the database is unreachable or went
 * away mid-request. Pure; never throws.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string') {
      if (code.startsWith('08') && code.length === 5) return true; // connection_exception class
      if (UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_ERRNOS.has(code)) return true;
    }
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((re) => re.test(message))) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * True when `err` is an error PostgreSQL itself reported (pg's
 * DatabaseError: it has a SQLSTATE `code` and a `severity`). Its text names
 * tables, types and values, so it must never reach a client.
 */
export function isDatabaseError(err: unknown): boolean {
  const e = err as { code?: unknown; severity?: unknown } | null;
  return typeof e === 'object' && e !== null && typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) && typeof e.severity === 'string';
}
