import type { Kysely } from 'kysely';
import type { DB } from './db.js';

/**
 * What this process knows to be durable on each shard: the highest
 * revision R such that every commit numbered R or below is flushed to disk.
 *
 * Why a single number covers all of them: a write holds its shard's
 * revision counter until its (asynchronous) commit, so every revision below
 * R committed before R's write took the counter, and its commit record lies
 * before R's in the WAL. A flush that covers R's commit record covers them
 * all. The number only grows, and only from a flush this process saw end:
 * a write acknowledged by the write batcher, or a durability barrier run
 * after a read (for the revision the read saw). Revisions of another process, or of a write in
 * a caller's transaction, are simply not known here: a read then falls back
 * to the barrier, as before.
 *
 * Reads use it to skip the barrier. A point read's row carries the revision
 * of the commit that wrote it, and no later committed change of the same
 * key exists (it would have been read instead), so a row whose revision is
 * covered is durable state; a page of the change log is durable when its
 * last revision is. While other tenants write, the WAL always has unflushed
 * records, and without this every read would wait for an fsync of writes it
 * never sees. (Encryption rotation rewrites a row in place under its
 * revision without waiting for a flush; a crash can only bring back the
 * same object sealed under the older key.)
 *
 * Keyed by the shard's platform handle (what a ShardRouter's dbFor and
 * shards return): revisions are numbered per database.
 */
interface ShardMark {
  /** Every revision up to this one is durable. */
  revision: number;
  /** This process's writes in flight on the shard (their acknowledgements raise `revision`). */
  writing: number;
  /** Called whenever `revision` or `writing` changes. */
  waiters: Set<() => void>;
}

const marks = new WeakMap<Kysely<DB>, ShardMark>();

function markOf(shard: Kysely<DB>): ShardMark {
  let mark = marks.get(shard);
  if (!mark) {
    mark = { revision: 0, writing: 0, waiters: new Set() };
    marks.set(shard, mark);
  }
  return mark;
}

function wake(mark: ShardMark): void {
  for (const waiter of [...mark.waiters]) waiter();
}

/** Records that every commit up to `revision` on `shard` is durable (a flush this process saw end covered it). */
export function noteDurable(shard: Kysely<DB>, revision: number): void {
  const mark = markOf(shard);
  if (revision <= mark.revision) return;
  mark.revision = revision;
  wake(mark);
}

/** Whether the commit numbered `revision` on `shard` is known to be durable. */
export function knownDurable(shard: Kysely<DB>, revision: number): boolean {
  return revision <= (marks.get(shard)?.revision ?? 0);
}

/**
 * Runs `write`, which resolves only once durable with its revision `r`,
 * counted as one of this process's writes in flight on `shard` (so readers
 * may wait for it rather than run a barrier of their own), and records `r`
 * as durable.
 */
export async function trackWrite<T extends { r: number }>(shard: Kysely<DB>, write: () => Promise<T>): Promise<T> {
  const mark = markOf(shard);
  mark.writing++;
  try {
    const outcome = await write();
    noteDurable(shard, outcome.r);
    return outcome;
  } finally {
    mark.writing--;
    wake(mark);
  }
}

/**
 * Whether `revision` on `shard` is known durable, waiting for it while this
 * process has writes in flight there (each is acknowledged only after a
 * flush, which raises the mark), for at most `timeoutMs`. A reader woken by
 * a write's NOTIFY finds that write committed but not yet flushed: its own
 * acknowledgement follows within one fsync, and waiting for it spares the
 * reader a flush of its own, which would queue one more fsync behind it.
 * Resolves false at once when nothing of this process is in flight.
 */
export function awaitKnownDurable(shard: Kysely<DB>, revision: number, timeoutMs: number): boolean | Promise<boolean> {
  const mark = markOf(shard);
  if (revision <= mark.revision) return true;
  if (mark.writing === 0) return false;
  return new Promise<boolean>((resolve) => {
    const done = (known: boolean) => {
      clearTimeout(timer);
      mark.waiters.delete(check);
      resolve(known);
    };
    const check = () => {
      if (revision <= mark.revision) done(true);
      else if (mark.writing === 0) done(false);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    mark.waiters.add(check);
  });
}

/** The highest revision of `shard` this process saw acknowledged durable (0 when none). */
export function durableRevision(shard: Kysely<DB>): number {
  return marks.get(shard)?.revision ?? 0;
}
