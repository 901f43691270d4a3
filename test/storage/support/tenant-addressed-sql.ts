/** A statement as a pg client sent it: its text and bound values. */
export interface SentStatement {
  text: string;
  values: unknown[];
}

/** Whether a statement addresses one tenant; `tenants` lists the tenant values it binds. */
export interface Verdict {
  ok: boolean;
  why: string;
  tenants?: string[];
}

/**
 * Statements that touch no table: transaction control, and the session
 * settings a pool sets on connect and a past-state read sets for itself.
 */
const NO_DATA: RegExp[] = [
  /^\s*(begin|commit|rollback|start transaction)(\s+isolation level [a-z ]+)?\s*;?\s*$/i,
  /^\s*(savepoint|release savepoint|rollback to savepoint)\s+"?\w+"?\s*;?\s*$/i,
  /^\s*SELECT set_config\('synchronous_commit', 'on', false\) WHERE current_setting\('synchronous_commit'\) = 'off'\s*$/,
  /^\s*SELECT (set_config\('enable_\w+', '(on|off)', true\)(,\s*)?)+\s*$/,
  // A pooled connection going back to the platform's role after serving a tenant (row-level security, migration 0019).
  /^\s*RESET ROLE; RESET plinth\.tenant\s*$/,
];

/**
 * The documented exception: reads of the shard's own watermarks, one row
 * per database, that every tenant on it shares. On Citus each would become
 * per tenant (a revision sequence per tenant; the WAL flush is the worker's
 * own). Keep this list short: a statement over objects or changes never
 * belongs here.
 */
export const SHARD_WATERMARKS: ReadonlyArray<{ shape: RegExp; reason: string }> = [
  { shape: /^select "value" from "revision_counter"$/, reason: "the shard's newest revision (a list's or watch's resourceVersion)" },
  { shape: /^select "compacted_revision" from "compaction_state"$/, reason: 'the revision below which the shard compacted its change log (410 Expired)' },
  { shape: /^SELECT plinth_flush\(\)$/, reason: "the durability barrier: flushes this database's WAL up to the caller's commit" },
  { shape: /^SELECT pg_current_wal_\w+\(\)( AS \w+)?$/, reason: "this database's WAL position (the durability barrier's fast path)" },
];

/** Functions whose first argument is the tenant (every plinth_ function but the helpers below). */
const NOT_TENANT_FIRST = new Set(['plinth_hash', 'plinth_flush', 'plinth_write_batch', 'plinth_write_batch_durable', 'plinth_history_gap']);

function param(values: unknown[], n: string): unknown {
  return values[Number(n) - 1];
}

/** The tenant values a statement binds: tenant predicates, tenant columns of inserts, first arguments of write functions, ops of a write batch. */
function boundTenants(st: SentStatement): unknown[] {
  const found: unknown[] = [];
  const text = st.text;
  // `tenant = $n` / `"tenant" = $n` / `o.tenant = $n`, and the tenants table's own key.
  for (const m of text.matchAll(/(?:^|[^\w"])"?tenant"?\s*=\s*\$(\d+)/gi)) found.push(param(st.values, m[1]));
  // The tenants table's key is its name: `name = $n` unqualified, or qualified by the alias the statement gives tenants.
  for (const t of text.matchAll(/\b(?:from|update|into|join)\s+"?tenants"?(?:\s+(?:as\s+)?"?(\w+)"?)?/gi)) {
    const alias = t[1] && !/^(where|set|values|for|on|cross|join|left|inner|order|limit)$/i.test(t[1]) ? t[1] : undefined;
    const qualifier = alias ? `(?:"?${alias}"?\\.)?` : '';
    for (const m of text.matchAll(new RegExp(`(?:^|[^\\w".])${qualifier}"?name"?\\s*=\\s*\\$(\\d+)`, 'gi'))) found.push(param(st.values, m[1]));
  }
  // insert into t ("tenant", …) values ($1, …), ($k, …): the tenant column of every row.
  const insert = /\binsert\s+into\s+"?(\w+)"?\s*\(([^)]*)\)\s*values\s*(.*)$/is.exec(text);
  if (insert) {
    const column = insert[1] === 'tenants' ? 'name' : 'tenant';
    const at = insert[2].split(',').map((c) => c.trim().replace(/"/g, '')).indexOf(column);
    if (at >= 0) {
      for (const row of insert[3].matchAll(/\(([^()]*)\)/g)) {
        const cell = row[1].split(',')[at]?.trim();
        const p = cell ? /^\$(\d+)/.exec(cell) : null;
        found.push(p ? param(st.values, p[1]) : undefined);
      }
    }
  }
  // A connection made to run as the request role for one tenant (row-level security, migration 0019).
  for (const m of text.matchAll(/set_config\('plinth\.tenant',\s*\$(\d+)/g)) found.push(param(st.values, m[1]));
  for (const m of text.matchAll(/\b(plinth_\w+)\(\s*\$(\d+)/g)) {
    if (!NOT_TENANT_FIRST.has(m[1])) found.push(param(st.values, m[2]));
  }
  for (const m of text.matchAll(/\bplinth_write_batch(?:_durable)?\(\s*\$(\d+)/g)) {
    const raw = param(st.values, m[1]);
    const ops = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Array<{ t?: unknown }>;
    for (const op of ops) found.push(op.t);
  }
  return found;
}

/**
 * Judges one statement of the request path: ok when it touches no table,
 * is one of the {@link SHARD_WATERMARKS}, or binds exactly one tenant value
 * (every tenant it binds is the same string). A statement with no tenant
 * value (a scan of every tenant's rows), or with several (a batch or a
 * lookup across tenants), is not ok. Pure.
 */
export function tenantsAddressedBy(st: SentStatement): Verdict {
  const text = st.text.trim();
  if (NO_DATA.some((re) => re.test(text))) return { ok: true, why: 'touches no table' };
  const watermark = SHARD_WATERMARKS.find((w) => w.shape.test(text));
  if (watermark) return { ok: true, why: `shard watermark: ${watermark.reason}` };
  const bound = boundTenants(st);
  const distinct = [...new Set(bound)];
  if (distinct.length === 0) return { ok: false, why: 'binds no tenant' };
  if (distinct.some((t) => typeof t !== 'string' || t === '')) return { ok: false, why: `binds a tenant that is not one string: ${JSON.stringify(distinct)}`, tenants: distinct.filter((t): t is string => typeof t === 'string') };
  const tenants = distinct as string[];
  if (tenants.length > 1) return { ok: false, why: `binds several tenants: ${tenants.join(', ')}`, tenants };
  return { ok: true, why: `addresses tenant ${tenants[0]}`, tenants };
}
