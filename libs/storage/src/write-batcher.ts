import { AsyncResource } from 'node:async_hooks';
import { type Kysely, sql } from 'kysely';
import type { DB } from './db.js';
import { preparedSql } from './prepared-statements.js';
import { tenantScoped } from './tenant-scope.js';
import type { ObjectKey } from './object-key.js';

/** One write as the batch functions of migration 0008 take it (see there). */
export type BatchedWrite =
  | { op: 'c'; key: ObjectKey; body: Record<string, unknown> }
  | { op: 'u'; key: ObjectKey; body: Record<string, unknown>; expected: number | null }
  | { op: 'd'; key: ObjectKey; expected: number | null };

/** What a successful write returns: its revision, and for a delete the object's last stored body. */
export interface WriteOutcome {
  r: number;
  b?: Record<string, unknown>;
}

/** Tuning and observation of a {@link WriteBatcher}. */
export interface WriteBatcherOptions {
  /**
   * Most writes in one batch. Each write of a batch is a subtransaction;
   * PostgreSQL tracks up to 64 per transaction cheaply, so stay below that.
   */
  maxBatch?: number;
  /**
   * Batches of one tenant in flight at once, each on its own connection
   * (default 1: with 32 writers, 1 gave larger batches and more writes/s
   * than 2 or 3 in bench runs on 2 vCPUs).
   */
  maxInFlight?: number;
  /**
   * Most batches in flight at once over all tenants (default 8). A batch
   * holds one tenant's writes, so while several tenants write at once their
   * batches go side by side, each on its own connection: they take the
   * revision counter in turn (each only until its asynchronous commit) and
   * PostgreSQL flushes their commits to disk together.
   */
  maxTenantsInFlight?: number;
  /** Called with the size of every batch sent. */
  onBatch?: (size: number) => void;
  /**
   * Least milliseconds between two cleanings of the shard's GIN pending
   * lists (migration 0025) after writes (default 250; a negative value
   * never cleans them: autovacuum alone does).
   */
  ginCleanIntervalMs?: number;
  /** Called after each cleaning with the pending pages it merged (-1: another session was cleaning) and its milliseconds. */
  onGinClean?: (pages: number, ms: number) => void;
  /** Called when a cleaning failed (it is tried again after the next writes). */
  onGinCleanError?: (err: unknown) => void;
}

/**
 * A write refused inside a batch, shaped like the `pg` driver's error (SQLSTATE
 * `code`, `severity`) so that callers classify it exactly as they would the
 * same error of a single write.
 */
export class BatchedWriteError extends Error {
  readonly severity = 'ERROR';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface Pending {
  write: BatchedWrite;
  resolve: (outcome: WriteOutcome) => void;
  reject: (err: unknown) => void;
}

type Result = WriteOutcome | { e: string; m: string };

/**
 * The async context of this module's loading, outside any request: the GIN
 * cleaning runs in it, so that it is not taken for the work of the request
 * whose write happened to trigger it (tracing, SQL recording).
 */
const MAINTENANCE_SCOPE = new AsyncResource('plinth.gin-clean');

const DEADLOCK_DETECTED = '40P01';
const DATA_EXCEPTION_CLASS = '22';

/** Labels from which a write is sent alone (migration 0025's heavy label sets start near a thousand short labels). */
export const HEAVY_LABELS = 512;

/** Whether `w` creates or updates an object of at least {@link HEAVY_LABELS} labels. Does not copy the labels. */
export function labelHeavy(w: BatchedWrite): boolean {
  if (w.op === 'd') return false;
  const labels = (w.body.metadata as { labels?: unknown } | undefined)?.labels;
  if (!labels || typeof labels !== 'object') return false;
  let n = 0;
  for (const _ in labels) if (++n >= HEAVY_LABELS) return true;
  return false;
}

/** The positional arguments of the single-write functions and procedures for `w`. */
function singleArgs(w: BatchedWrite) {
  const k = sql`${w.key.tenant}, ${w.key.resource}, ${w.key.namespace}, ${w.key.name}`;
  if (w.op === 'c') return sql`${k}, ${JSON.stringify(w.body)}::jsonb`;
  if (w.op === 'u') return sql`${k}, ${JSON.stringify(w.body)}::jsonb, ${w.expected}::bigint`;
  return sql`${k}, ${w.expected}::bigint`;
}

/**
 * Runs `w` alone with the plain write function inside the caller's
 * transaction `db`: no commit, no flush; the caller owns both. Throws the
 * driver's error when the write is refused.
 */
export async function writeInTransaction(w: BatchedWrite, db: Kysely<DB>): Promise<WriteOutcome> {
  const args = singleArgs(w);
  if (w.op === 'c') return (await sql<WriteOutcome>`SELECT plinth_create(${args}) AS r`.execute(db)).rows[0];
  if (w.op === 'u') return (await sql<WriteOutcome>`SELECT plinth_update(${args}) AS r`.execute(db)).rows[0];
  return (await sql<WriteOutcome>`SELECT revision AS r, body AS b FROM plinth_delete(${args})`.execute(db)).rows[0];
}

/** The JSON form of a write in a batch (migration 0008's op object). */
function opJson(w: BatchedWrite): Record<string, unknown> {
  const op: Record<string, unknown> = { op: w.op, t: w.key.tenant, r: w.key.resource, s: w.key.namespace, n: w.key.name };
  if (w.op !== 'd') op.b = w.body;
  if (w.op !== 'c') op.x = w.expected;
  return op;
}

/**
 * Group commit for autocommit writes: writes submitted while a batch is in
 * flight wait and go together in the next one (writes of one tenant per
 * batch: the oldest waiting write's), which is one transaction
 * (a savepoint per write), one hold of the revision counter, one commit and
 * one WAL flush (migration 0008). Nothing waits on a timer: an idle batcher
 * sends a write at once, alone, with the single-write procedure.
 *
 * Every promise settles only after its batch's commit is durable (or the
 * batch failed as a whole: then every write of it rejects with the same
 * error, and none of it is committed unless the connection was lost during
 * COMMIT, as with a single write). Writes of one batch get revisions in the
 * order they were submitted.
 */
export class WriteBatcher {
  private readonly queue: Pending[] = [];
  private inFlight = 0;
  /** Batches in flight per tenant. */
  private readonly tenantsInFlight = new Map<string, number>();
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private readonly maxTotal: number;
  /** GIN cleaning: whether writes committed since the last one started, one is running or due, when the last started. */
  private ginDirty = false;
  private ginBusy = false;
  private ginLastStart = 0;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly options: WriteBatcherOptions = {},
  ) {
    this.maxBatch = Math.max(1, Math.min(options.maxBatch ?? 50, 60));
    this.maxInFlight = Math.max(1, options.maxInFlight ?? 1);
    this.maxTotal = Math.max(this.maxInFlight, options.maxTenantsInFlight ?? 8);
  }

  /**
   * Queues `write` and resolves with its outcome once durable; rejects with
   * the write's own error ({@link BatchedWriteError}, or the driver's error
   * for a write sent alone) when it was refused. Does not mutate `write`.
   */
  submit(write: BatchedWrite): Promise<WriteOutcome> {
    return new Promise<WriteOutcome>((resolve, reject) => {
      this.queue.push({ write, resolve, reject });
      this.drain();
    });
  }

  private drain(): void {
    while (this.inFlight < this.maxTotal) {
      const batch = this.takeBatch();
      if (!batch) return;
      const tenant = batch[0].write.key.tenant;
      this.inFlight++;
      this.tenantsInFlight.set(tenant, (this.tenantsInFlight.get(tenant) ?? 0) + 1);
      this.options.onBatch?.(batch.length);
      void this.send(batch).finally(() => {
        this.noteCommitted();
        this.inFlight--;
        const n = (this.tenantsInFlight.get(tenant) ?? 1) - 1;
        if (n > 0) this.tenantsInFlight.set(tenant, n);
        else this.tenantsInFlight.delete(tenant);
        this.drain();
      });
    }
  }

  /**
   * Removes and returns the next batch: the oldest waiting write of a
   * tenant with fewer than `maxInFlight` batches in flight, and up to
   * `maxBatch - 1` later writes of the same tenant, in submission order;
   * undefined when no such write waits. One statement and one transaction
   * never carry two tenants' rows (a Citus cluster distributing by tenant
   * would run it on one worker; see docs/sharding.md); writes of other
   * tenants keep their place. A label-heavy write goes alone: it stores its
   * row and index entries before taking the revision counter, which a
   * batch takes before its first write (migration 0025).
   */
  private takeBatch(): Pending[] | undefined {
    const first = this.queue.find((p) => (this.tenantsInFlight.get(p.write.key.tenant) ?? 0) < this.maxInFlight);
    if (!first) return undefined;
    const tenant = first.write.key.tenant;
    // A label-heavy write ends the batch (its own if it comes first), so the tenant's writes keep their order.
    let closed = labelHeavy(first.write);
    const batch: Pending[] = [first];
    const rest: Pending[] = [];
    for (const p of this.queue) {
      if (p === first) continue;
      if (!closed && p.write.key.tenant === tenant && batch.length < this.maxBatch) closed = labelHeavy(p.write);
      if (!closed && p.write.key.tenant === tenant && batch.length < this.maxBatch) batch.push(p);
      else rest.push(p);
    }
    this.queue.splice(0, this.queue.length, ...rest);
    return batch;
  }

  private async send(batch: Pending[]): Promise<void> {
    try {
      const results = batch.length > 1 ? await this.manyOrNothing(batch.map((p) => p.write)) : undefined;
      if (results) {
        batch.forEach((p, i) => settle(p, results[i]));
        return;
      }
      // Alone: a batch of one, or writes PostgreSQL could not take in together. In order, for their revisions.
      for (const p of batch) await this.single(p.write).then(p.resolve, p.reject);
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  }

  /**
   * Writes have ended (committed or not): their entries of the GIN indexes
   * with deferred cleaning (object labels, owner references, change labels)
   * wait in those indexes' pending lists, which no writer merges while it
   * holds the revision counter (migration 0025). Merges them soon, outside
   * any write: at most one cleaning at a time from this batcher, at most
   * one every `ginCleanIntervalMs`, one more after the last writes of a
   * burst, and none while no write happens.
   */
  private noteCommitted(): void {
    const every = this.options.ginCleanIntervalMs ?? 250;
    if (every < 0) return;
    this.ginDirty = true;
    if (this.ginBusy) return;
    this.ginBusy = true;
    const wait = Math.max(0, this.ginLastStart + every - Date.now());
    MAINTENANCE_SCOPE.runInAsyncScope(() => setTimeout(() => void this.cleanGinPending(), wait).unref());
  }

  private async cleanGinPending(): Promise<void> {
    this.ginDirty = false;
    this.ginLastStart = Date.now();
    try {
      const { rows } = await sql<{ pages: string }>`SELECT plinth_clean_gin_pending() AS pages`.execute(this.db);
      this.options.onGinClean?.(Number(rows[0].pages), Date.now() - this.ginLastStart);
    } catch (err) {
      this.options.onGinCleanError?.(err);
    } finally {
      this.ginBusy = false;
      if (this.ginDirty) this.noteCommitted();
    }
  }

  /** A batch of one: the single-write procedures of the initial migration, with no savepoint. */
  private async single(w: BatchedWrite): Promise<WriteOutcome> {
    const args = singleArgs(w);
    const db = tenantScoped(this.db, w.key.tenant);
    if (w.op === 'c') return (await preparedSql<WriteOutcome>`CALL plinth_create_durable(${args}, NULL)`.execute(db)).rows[0];
    if (w.op === 'u') return (await preparedSql<WriteOutcome>`CALL plinth_update_durable(${args}, NULL)`.execute(db)).rows[0];
    return (await preparedSql<WriteOutcome>`CALL plinth_delete_durable(${args}, NULL, NULL)`.execute(db)).rows[0];
  }

  /**
   * Sends a batch. Once more if PostgreSQL chose it as a deadlock victim
   * while it locked its rows or the counter; undefined (send them one by
   * one) if it could not read the batch's input at all (a data exception,
   * such as a body with a NUL character that jsonb refuses), which would
   * otherwise fail every write for one write's content. Both errors come
   * before the batch's COMMIT (errors of the writes themselves are caught
   * per write), so nothing of it was committed and no write is applied twice.
   */
  private async manyOrNothing(writes: BatchedWrite[], retried = false): Promise<Result[] | undefined> {
    try {
      return await this.many(writes);
    } catch (err) {
      const code = (err as { code?: string })?.code ?? '';
      if (code === DEADLOCK_DETECTED && !retried) return this.manyOrNothing(writes, true);
      if (code.startsWith(DATA_EXCEPTION_CLASS) && code.length === 5) return undefined;
      throw err;
    }
  }

  /** Sends writes of one tenant (as every batch is) under that tenant's row-level security. */
  private async many(writes: BatchedWrite[]): Promise<Result[]> {
    const ops = JSON.stringify(writes.map(opJson));
    const db = tenantScoped(this.db, writes[0].key.tenant);
    const { rows } = await preparedSql<{ results: Result[] }>`CALL plinth_write_batch_durable(${ops}::jsonb, NULL)`.execute(db);
    return rows[0].results;
  }
}

function settle(p: Pending, result: Result | undefined): void {
  if (!result) p.reject(new Error('batched write returned no result'));
  else if ('e' in result) p.reject(new BatchedWriteError(result.e, result.m));
  else p.resolve(result);
}
