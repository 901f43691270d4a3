import pg from 'pg';
import { settlesWithin } from './database-probe.js';

/** Options of {@link installStatementDeadline}. */
export interface StatementDeadlineOptions {
  /** After how long without an answer a statement's server is checked (ms; 0: never). */
  afterMs: number;
  /** How long that check may take before the server counts as not answering (ms). */
  checkTimeoutMs: number;
  /** Told when a session is abandoned (for a log line). */
  onAbandon?: (server: string, waitedMs: number) => void;
}

interface Answer {
  at: number;
  alive: Promise<boolean>;
}

/** Recent liveness checks by `host:port`: statements waiting on one server share one check. */
const checks = new Map<string, Answer>();
const CHECK_REUSE_MS = 500;

/** The parameters pg resolved for a client (host, port and credentials; set per session by HostListClient). */
type Params = { host: string; port: number; user?: string; password?: unknown; database?: string; ssl?: unknown };

function paramsOf(client: pg.Client): Params {
  return (client as unknown as { connectionParameters: Params }).connectionParameters;
}

/**
 * Whether the server of `p` answers `SELECT 1` on a new session within
 * `timeoutMs`. A server that is frozen (SIGSTOP), partitioned away or
 * powered off does not; a busy one does, however long its statements run.
 */
export function serverAnswers(p: Params, timeoutMs: number): Promise<boolean> {
  const key = `${p.host}:${p.port}`;
  const recent = checks.get(key);
  if (recent && Date.now() - recent.at < CHECK_REUSE_MS) return recent.alive;
  const alive = (async () => {
    const probe = new pg.Client({ host: p.host, port: p.port, user: p.user, password: p.password as string | undefined, database: p.database, ssl: p.ssl as pg.ClientConfig['ssl'], connectionTimeoutMillis: timeoutMs, application_name: 'plinth-liveness' });
    probe.on('error', () => undefined);
    try {
      return await settlesWithin(() => probe.connect().then(() => probe.query('SELECT 1')), timeoutMs);
    } finally {
      (probe as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
      probe.end().catch(() => undefined);
    }
  })();
  checks.set(key, { at: Date.now(), alive });
  return alive;
}

/** Ends a session at once without a word to the server (see {@link installStatementDeadline} for why never a cancel). */
export function abandonSession(client: pg.Client): void {
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}

/**
 * Bounds, on the client side, how long a statement of `client` waits on a
 * server that stopped answering: when a statement has had no answer for
 * `afterMs`, the server is asked `SELECT 1` on a new session; if that gets
 * no answer within `checkTimeoutMs`, the session is abandoned (its socket
 * destroyed), so the statement fails with "Connection terminated" (a 503
 * with Retry-After) and the pool drops the session. A server that answers
 * keeps the statement (a slow statement on a live server is not cut), and
 * it is checked again after another `afterMs`.
 *
 * Never a cancel request, and never a server-side `statement_timeout`: a
 * COMMIT waiting for a synchronous standby that is cancelled returns
 * success to the client (PostgreSQL only adds a WARNING that the commit is
 * local and might not be replicated), so a cancelled write would be
 * acknowledged without the standby that makes it survive a failover. An
 * abandoned session gives the client an error, and the write's outcome is
 * unknown to it (a 503), which is what a write in flight during a failover
 * is anyway. TCP keepalive alone would take minutes.
 */
export function installStatementDeadline(client: pg.Client, opts: StatementDeadlineOptions): void {
  if (opts.afterMs <= 0) return;
  const original = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const result = original(...args);
    if (result && typeof (result as Promise<unknown>).then === 'function') {
      const stop = watch(client, opts);
      (result as Promise<unknown>).then(stop, stop);
    }
    return result;
  };
}

function watch(client: pg.Client, opts: StatementDeadlineOptions): () => void {
  const started = Date.now();
  let done = false;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    timer = setTimeout(() => {
      const p = paramsOf(client);
      void serverAnswers(p, opts.checkTimeoutMs).then((alive) => {
        if (done) return;
        if (alive) return arm();
        opts.onAbandon?.(`${p.host}:${p.port}`, Date.now() - started);
        abandonSession(client);
      });
    }, opts.afterMs);
    timer.unref();
  };
  arm();
  return () => {
    done = true;
    clearTimeout(timer);
  };
}
