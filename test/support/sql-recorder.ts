import { AsyncLocalStorage } from 'node:async_hooks';
import type { EventEmitter } from 'node:events';
import pg from 'pg';

/** One statement a pg client sent while a request was being served. */
export interface RecordedStatement {
  /** The SQL text as sent (with `$n` placeholders). */
  text: string;
  /** Its bound values. */
  values: unknown[];
  /** `METHOD url` of the request it ran for. */
  request: string;
}

type Listener = (...args: unknown[]) => void;
type Query = (this: pg.Client, ...args: unknown[]) => unknown;

/**
 * Collects the SQL an in-process server sends on behalf of HTTP requests,
 * for tests only (nothing in the server knows about it):
 *
 * - every `pg.Client#query` call (pool clients included) is seen, with its
 *   text and values;
 * - the server's `request` listeners are wrapped so that each request's
 *   handling, and every promise and callback it starts, runs with the
 *   request in an AsyncLocalStorage. `enterWith` (not only `run`) keeps the
 *   request on the parser's async resource, so callbacks of the request's
 *   own body stream (which Fastify awaits before routing) still carry it.
 *
 * A statement is recorded only when it runs with a request in the store:
 * controllers' sweeps, the change relay, compaction and the like start from
 * timers and connections opened at start-up, outside any request, and are
 * not recorded even when they run at the same time.
 */
export class SqlRecorder {
  readonly statements: RecordedStatement[] = [];
  private readonly current = new AsyncLocalStorage<string>();
  private recording = false;
  private original: Query | undefined;
  private wrapped: Array<{ server: EventEmitter; original: Listener; wrapper: Listener }> = [];

  /** Patches `pg.Client#query` (once) and wraps `server`'s request listeners. Mutates both. */
  install(server: EventEmitter): void {
    if (!this.original) {
      const original = pg.Client.prototype.query as unknown as Query;
      this.original = original;
      // eslint-disable-next-line @typescript-eslint/no-this-alias
      const recorder = this;
      (pg.Client.prototype as unknown as { query: Query }).query = function (this: pg.Client, ...args: unknown[]) {
        recorder.note(args);
        return original.apply(this, args);
      };
    }
    for (const original of server.listeners('request') as Listener[]) {
      const wrapper: Listener = (req, ...rest) => {
        const r = req as { method?: string; url?: string };
        const tag = `${r.method} ${r.url}`;
        this.current.enterWith(tag);
        this.current.run(tag, () => original.call(server, req, ...rest));
      };
      server.removeListener('request', original);
      server.on('request', wrapper);
      this.wrapped.push({ server, original, wrapper });
    }
  }

  /** Starts recording (statements of requests before this are not kept). */
  start(): void {
    this.recording = true;
  }

  /** Stops recording; returns what was recorded. */
  stop(): RecordedStatement[] {
    this.recording = false;
    return this.statements;
  }

  /** Restores `pg.Client#query` and the servers' listeners. */
  uninstall(): void {
    if (this.original) (pg.Client.prototype as unknown as { query: Query }).query = this.original;
    this.original = undefined;
    for (const { server, original, wrapper } of this.wrapped) {
      server.removeListener('request', wrapper);
      server.on('request', original);
    }
    this.wrapped = [];
  }

  private note(args: unknown[]): void {
    const request = this.current.getStore();
    if (!this.recording || request === undefined) return;
    const [first, second] = args;
    const config = typeof first === 'object' && first !== null ? (first as { text?: string; values?: unknown[] }) : undefined;
    // A leading comment (the storage layer's mark of a named statement) is not part of what the statement does.
    const text = (typeof first === 'string' ? first : (config?.text ?? '')).replace(/^\s*\/\*.*?\*\/\s*/, '');
    const values = Array.isArray(second) ? second : (config?.values ?? []);
    this.statements.push({ text, values, request });
  }
}
