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
 * after reading the counter. Revisions of another process, or of a write in
 * a caller's transaction, are simply not known here: a read then falls back
 * to the global barrier, as before.
 *
 * A point read uses it to skip the barrier: the row it read carries the
 * revision of the commit that wrote it, and no later committed change of
 * the same key exists (it would have been read instead), so a row whose
 * revision is covered is durable state. While other tenants write, the WAL
 * always has unflushed records, and without this every read would wait for
 * an fsync of writes it never sees. (Encryption rotation rewrites a row in
 * place under its revision without waiting for a flush; a crash can only
 * bring back the same object sealed under the older key.)
 *
 * Keyed by the shard's platform handle (what a ShardRouter's dbFor
 * returns): revisions are numbered per database.
 */
const durable = new WeakMap<Kysely<DB>, { revision: number }>();

/** Records that every commit up to `revision` on `shard` is durable (a flush this process saw end covered it). */
export function noteDurable(shard: Kysely<DB>, revision: number): void {
  const mark = durable.get(shard);
  if (!mark) durable.set(shard, { revision });
  else if (revision > mark.revision) mark.revision = revision;
}

/** Whether the commit numbered `revision` on `shard` is known to be durable. */
export function knownDurable(shard: Kysely<DB>, revision: number): boolean {
  return revision <= (durable.get(shard)?.revision ?? 0);
}
