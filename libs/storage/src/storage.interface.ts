import type { ChangeEvent } from './change-log.repository.js';
import type { ChangeScope } from './change-scope-sql.js';
import type { ChunkSizing, ListChunk, ListQuery, ListResult } from './object-list.repository.js';
import type { ObjectKey, StoredObject } from './object-key.js';

/** Options of {@link Storage.get}. */
export interface GetOptions {
  /**
   * An internal read (an admission lookup, the read of a read-modify-write):
   * it may answer from a commit not yet durable, which a client is never
   * shown; the write that follows has its own barrier.
   */
  internal?: boolean;
}

/**
 * Computes the next state of an object from its current one, for
 * {@link Storage.guaranteedUpdate}: the new body, or undefined to leave the
 * object as it is. Throwing ends the update with that error. May run more
 * than once (after a conflict, with the newer state).
 */
export type TryUpdate = (current: StoredObject) => Record<string, unknown> | undefined | Promise<Record<string, unknown> | undefined>;

/** Options of {@link Storage.guaranteedUpdate}. */
export interface GuaranteedUpdateOptions {
  /**
   * A precondition: the object must still be at this revision (the
   * client's resourceVersion), or the update fails with Conflict rather
   * than retrying.
   */
  expectedRevision?: number;
  /**
   * A state of the object the caller already holds (e.g. from a cache):
   * tried first, so an update that does not conflict reads nothing; on a
   * conflict the object is read afresh.
   */
  cached?: StoredObject;
  /** Attempts before giving up with the last Conflict (default 10). */
  maxAttempts?: number;
}

/** What a watch is scoped to: one tenant's resource, optionally one namespace or one object. */
export type WatchScope = ChangeScope;

/** Receives the changes of a watch, in revision order, each once. */
export interface WatchSink {
  onChange(change: ChangeEvent): void;
  /** The watch ended without being stopped (its feed went, the store closed); the watcher re-watches from its last revision. */
  onEnd?(reason: string): void;
}

/** An open watch. */
export interface StorageWatcher {
  /** Ends the watch; no change is delivered afterwards. Safe to call more than once. */
  stop(): void;
}

/**
 * Plinth's object storage: what every store of Kubernetes objects offers,
 * whatever holds them (the PostgreSQL store, the same store read through a
 * replica's watch cache). Modelled on the storage interface of
 * k8s.io/apiserver: single objects by key with revisions as
 * resourceVersions, conditional writes, consistent lists at the newest or a
 * past revision, watches from a revision, compaction. Errors are
 * StorageErrors (NotFound, AlreadyExists, Conflict, Expired,
 * TooLargeResourceVersion, ...). test/storage runs its conformance suite
 * against every implementation.
 *
 * What is special to PostgreSQL (tenant moves, quotas, namespace sweeps,
 * encryption rotation) stays on the repositories of this package.
 */
export interface Storage {
  /** The object at `key`, or undefined. Throws StorageError Internal when its stored body cannot be decrypted. */
  get(key: ObjectKey, options?: GetOptions): Promise<StoredObject | undefined>;

  /**
   * One page of a list, in key order (namespace, name), at the newest
   * revision or at `query.atRevision`; later pages (`after: next`) at the
   * first page's revision show the same snapshot. Throws StorageError
   * Expired below the compacted revision, TooLargeResourceVersion above the
   * newest.
   */
  list(query: ListQuery): Promise<ListResult>;

  /**
   * The whole list of `query` (its `limit` ignored) as chunks of about
   * `sizing` bytes, one snapshot: every chunk carries the same revision.
   * For answering a large list without holding it in memory.
   */
  stream(query: ListQuery, sizing?: Partial<ChunkSizing>): AsyncGenerator<ListChunk, void, undefined>;

  /** Stores a new object; its revision becomes its resourceVersion. Throws StorageError AlreadyExists. Does not mutate `body`. */
  create(key: ObjectKey, body: Record<string, unknown>): Promise<StoredObject>;

  /**
   * Replaces the object if its revision is still `expectedRevision` (null:
   * whatever it is): the compare-and-swap {@link guaranteedUpdate} is built
   * on. Throws StorageError NotFound or Conflict.
   */
  update(key: ObjectKey, body: Record<string, unknown>, expectedRevision: number | null): Promise<StoredObject>;

  /**
   * Removes the object if its revision is still `expectedRevision` (null:
   * whatever it is); returns its last state stamped with the deletion's
   * revision. Throws StorageError NotFound or Conflict.
   */
  delete(key: ObjectKey, expectedRevision: number | null): Promise<StoredObject>;

  /**
   * Reads the object, computes its next state with `tryUpdate` and writes
   * it on condition that nothing changed meanwhile, retrying with the newer
   * state on a conflict. Returns the written state, or the current one when
   * `tryUpdate` changes nothing. Throws StorageError NotFound when the
   * object does not exist, Conflict when `options.expectedRevision` no
   * longer holds or the attempts ran out.
   */
  guaranteedUpdate(key: ObjectKey, tryUpdate: TryUpdate, options?: GuaranteedUpdateOptions): Promise<StoredObject>;

  /**
   * Watches `scope` from revision `from`: `sink` gets every change of it
   * after `from`, oldest first, each once, the history first and then live.
   * Resolves once the watch is open. Throws StorageError Expired when the
   * changes after `from` were compacted away.
   */
  watch(scope: WatchScope, from: number, sink: WatchSink): Promise<StorageWatcher>;

  /**
   * Returns once every write acknowledged so far on `tenant`'s shard (every
   * shard when omitted) is durable: what an internal read returned may then
   * be shown to a client.
   */
  ensureDurable(tenant?: string): Promise<void>;

  /** The newest committed revision of `tenant`'s shard (the default shard when omitted). */
  currentRevision(tenant?: string): Promise<number>;

  /** The oldest revision a list or a watch may still start from (history below it is compacted). */
  compactedRevision(): Promise<number>;

  /** Drops up to `batch` changes recorded before `olderThan` and raises the compacted revision past them; returns how many went. */
  compact(olderThan: Date, batch: number): Promise<number>;
}

/** Injection token of {@link Storage} (the application's object storage). */
export const STORAGE = Symbol('Storage');
