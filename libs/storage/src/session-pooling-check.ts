import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { connectSession, parseHostList } from './host-list-connector.js';

/**
 * What Plinth keeps in a PostgreSQL session, and so why a pooler that hands
 * a client's transactions to different server sessions (PgBouncer's
 * `pool_mode = transaction` or `statement`) breaks it. Each item is used:
 * - LISTEN on the watch connection (watch/change-listener.ts);
 * - session advisory locks, `pg_try_advisory_lock`, for leader election
 *   (advisory-lock-elector.ts), whose lease is the session itself;
 * - the session settings `role` and `plinth.tenant` for row-level security
 *   (tenant-scope.ts), set once per checkout, not per transaction (the durable
 *   write procedures COMMIT inside);
 * - named prepared statements (prepared-statements.ts);
 * - session-level `synchronous_commit` (db.ts: the durability barrier) and
 *   `idle_session_timeout` (the election connection).
 * (`jit`, `enable_sort` and the like are set transaction-locally, with
 * `set_config(…, true)`, and would survive a transaction pooler.)
 */
export const SESSION_STATE_USES =
  'LISTEN for watch notifications, session advisory locks for leader election, the session settings role and plinth.tenant for row-level security, named prepared statements, and session-level SET of synchronous_commit (the durability barrier)';

/** Thrown by {@link checkSessionPooling}: the URL reaches PostgreSQL through a pooler that does not keep sessions. */
export class SessionPoolingError extends Error {
  constructor(
    /** `host:port/database` of the URL, never the credentials. */
    readonly where: string,
    /** `transaction` (PgBouncer's pool_mode = transaction, or anything that moves a client between server sessions) or `statement`. */
    readonly mode: 'transaction' | 'statement',
    /** What the check saw, e.g. `two transactions of one connection ran in server sessions 101 and 102`. */
    readonly evidence: string,
  ) {
    super(
      `PostgreSQL at ${where} is reached through a connection pooler in ${mode} mode (${evidence}), e.g. PgBouncer with pool_mode = ${mode}: Plinth relies on session state (${SESSION_STATE_USES})`,
    );
    this.name = 'SessionPoolingError';
  }
}

const SETTING = 'plinth.pooling_check';

/** Resolves with `p`'s value, or with undefined after `ms` (p is then abandoned). */
async function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

function destroy(client: pg.Client | undefined): void {
  (client as unknown as { connection?: { stream?: { destroy(): void } } } | undefined)?.connection?.stream?.destroy();
}

/**
 * Checks, from the client side, that a connection to `url` keeps one
 * server session across its transactions, as PostgreSQL itself and a
 * pooler in session mode do; throws {@link SessionPoolingError} when it
 * does not (a pooler in transaction or statement mode). `SHOW POOLS` is
 * for PgBouncer's admin users only, so the check looks instead:
 *
 * 1. Connection A sets a session setting to a random token and reads its
 *    server's `pg_backend_pid()`.
 * 2. Connection B opens a transaction and keeps it open. A transaction
 *    pooler gives B the server session A just left (PgBouncer reuses the
 *    most recent one first): same backend pid, caught. In statement mode
 *    B's `BEGIN` is refused.
 * 3. A, in a new transaction while B holds its own, reads the pid and the
 *    setting again: through a transaction pooler it runs in another
 *    server session, without the token.
 *
 * In session mode (or straight to PostgreSQL) B gets a session of its own
 * and A finds its pid and token again. A step that does not answer within
 * `timeoutMs` (a pool with no free server session), or a B that cannot
 * connect, decides nothing. A's connection errors (unreachable,
 * credentials) are thrown as the driver's.
 */
export async function checkSessionPooling(url: string, timeoutMs = 5000): Promise<void> {
  let where: string;
  try {
    where = parseHostList(url).display;
  } catch {
    where = 'the database URL';
  }
  const config = { application_name: 'plinth-pooling-check', connectionTimeoutMillis: timeoutMs };
  const token = randomBytes(8).toString('hex');
  const a = await connectSession(url, config);
  a.on('error', () => undefined);
  let b: pg.Client | undefined;
  let holding: Promise<number> | undefined;
  try {
    const first = await a.query<{ pid: number }>(`SELECT pg_backend_pid() AS pid, set_config('${SETTING}', $1, false)`, [token]);
    const pidA = first.rows[0].pid;

    holding = (async () => {
      b = await connectSession(url, config);
      b.on('error', () => undefined);
      await b.query('BEGIN');
      return (await b.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    })();
    holding.catch(() => undefined);
    let pidB: number | undefined;
    try {
      pidB = await within(holding, timeoutMs);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (/statement (pooling )?mode/i.test(message)) throw new SessionPoolingError(where, 'statement', `a transaction block was refused: ${message}`);
      // B could not connect (e.g. max_connections reached): this step decides nothing; A's second look still may.
    }
    if (pidB === pidA) {
      throw new SessionPoolingError(where, 'transaction', `two connections ran in the same server session ${pidA}`);
    }

    const again = a.query<{ pid: number; token: string | null }>(`SELECT pg_backend_pid() AS pid, current_setting('${SETTING}', true) AS token`);
    again.catch(() => undefined);
    // No answer while B holds its server session: a transaction pooler out of free sessions; let B go and wait once more.
    let second = await within(again, timeoutMs);
    if (!second) {
      destroy(b);
      second = await within(again, timeoutMs);
    }
    if (!second) return;
    const { pid, token: seen } = second.rows[0];
    if (pid !== pidA || seen !== token) {
      throw new SessionPoolingError(
        where,
        'transaction',
        pid !== pidA ? `two transactions of one connection ran in server sessions ${pidA} and ${pid}` : 'a session setting was lost between two transactions of one connection',
      );
    }
  } finally {
    // B may still be connecting (a step that timed out): end it whenever it gets there.
    // end() of a session whose socket already closed may never resolve: bounded, then the socket destroyed.
    const endB = async () => {
      if (b) await within(b.end().catch(() => undefined), 1000);
      destroy(b);
    };
    void holding?.then(endB, endB);
    await endB();
    await within(a.end().catch(() => undefined), 1000);
    destroy(a);
  }
}
