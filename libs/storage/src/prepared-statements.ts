import { type RawBuilder, sql } from 'kysely';
import type pg from 'pg';

/**
 * Named (prepared) statements for the storage layer's hottest fixed-shape
 * queries: an object's get, the change feed's read, the write procedures'
 * CALLs.
 *
 * Sent unnamed, PostgreSQL parses and plans a statement on every
 * execution. For the get, planning (the policy of row-level security, the
 * objects table's many indexes) cost 99 µs of PostgreSQL's time against
 * 35 µs to run it (pg_stat_statements with track_planning, issue 29).
 * A named statement is parsed once per connection, and after its first
 * executions PostgreSQL runs a generic plan without planning again.
 * PostgreSQL plans again by itself when a plan depends on row-level
 * security and the role changed, or when a table it reads changed.
 *
 * A query opts in by starting with {@link PREPARE_MARK} (write it with
 * {@link preparedSql}). Only fixed-shape statements should: each distinct
 * text is one prepared statement on every connection. The process names at
 * most {@link MAX_PREPARED} distinct texts; any text after that goes
 * unnamed, as before, so a call site whose shape varied could not grow the
 * server's memory without bound.
 */
export const PREPARE_MARK = '/* plinth:prepared */ ';

/** Most distinct statement texts the process prepares (each costs a few KiB on every pooled connection). */
export const MAX_PREPARED = 64;

const names = new Map<string, string>();

/** The statement name for `text`, or undefined once {@link MAX_PREPARED} other texts have names. */
function nameFor(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_PREPARED) {
    name = `plinth_${names.size + 1}`;
    names.set(text, name);
  }
  return name;
}

/** Like Kysely's `sql` tag, for a fixed-shape statement to send as a named statement (see {@link PREPARE_MARK}). */
export function preparedSql<T = unknown>(strings: TemplateStringsArray, ...values: unknown[]): RawBuilder<T> {
  return sql<T>`${sql.raw(PREPARE_MARK)}${sql<T>(strings, ...values)}`;
}

const named = new WeakSet<pg.ClientBase>();

type Query = (this: pg.ClientBase, ...args: unknown[]) => unknown;

/**
 * Makes `client` send a query whose text starts with {@link PREPARE_MARK}
 * (given as text and values, as Kysely sends them) as a named statement.
 * Every other call goes through unchanged. It calls the class's `query` as
 * it is at call time, so a wrapper installed on the class later (a test's
 * statement recorder) still sees every statement. Idempotent.
 */
export function sendMarkedQueriesNamed(client: pg.ClientBase): void {
  if (named.has(client)) return;
  named.add(client);
  const classQuery = (): Query => (Object.getPrototypeOf(client) as { query: Query }).query;
  (client as unknown as { query: Query }).query = function (this: pg.ClientBase, ...args: unknown[]) {
    const [text, values] = args;
    if (typeof text === 'string' && text.startsWith(PREPARE_MARK) && args.length <= 2) {
      const name = nameFor(text);
      if (name !== undefined) return classQuery().call(client, { name, text, values: values ?? [] });
    }
    return classQuery().apply(client, args);
  };
}
