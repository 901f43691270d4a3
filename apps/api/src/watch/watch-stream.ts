import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { once } from 'node:events';
import { type ChangeEvent, corruptObjectReporting, withResourceVersion } from '@plinth/storage';
import type { CachedChange, CacheSubscriber } from '@plinth/storage';
import type { StatusBody } from '@plinth/apimachinery';
import { ApiError, type KubeObject } from '@plinth/apimachinery';
import type { RemoteConversion } from '../registry/resource-definition.js';
import { bookmarkBytes, cachedEventBytes, chunkPayload, encodeEvent, errorBytes, type WatchEventType, type WatchFormat } from './watch-encoder.js';

/** Which changes a watch wants. */
export interface WatchFilter {
  tenant: string;
  /** The storage resource (ChangeEvent key.resource). */
  resource: string;
  /** Undefined: all namespaces. */
  namespace: string | undefined;
  /** Set for a watch on one object by path. */
  name: string | undefined;
  /** Label and field selectors; undefined when there are none. */
  matches: ((obj: KubeObject) => boolean) | undefined;
}

/** What a stream needs from the service that owns it. */
export interface WatchStreamOwner {
  /** Bytes a live stream may still have queued from earlier ticks when a new event comes; more closes it as too slow. */
  readonly maxBufferBytes: number;
  /** Called once when the stream closes, for any reason. */
  streamClosed(stream: WatchStream, reason: string): void;
  /** Counts written events. */
  eventsWritten(n: number): void;
  /** Unsubscribes a stream from the cache. */
  unsubscribe(stream: WatchStream): void;
}

/** Conversions of cached changes by a CRD conversion webhook, shared by every watcher of the version (slot 0: new state, 1: old). */
const conversions = new WeakMap<object, Map<RemoteConversion, Array<Promise<KubeObject> | undefined>>>();

/** The change's object in the version `remote` converts to: one webhook call per change, version and state, however many watch it. */
function sharedConversion(change: object, remote: RemoteConversion, variant: 'new' | 'old', obj: KubeObject): Promise<KubeObject> {
  let byVersion = conversions.get(change);
  if (!byVersion) conversions.set(change, (byVersion = new Map()));
  let slots = byVersion.get(remote);
  if (!slots) byVersion.set(remote, (slots = []));
  const slot = variant === 'old' ? 1 : 0;
  return (slots[slot] ??= remote.fromStored([obj]).then((r) => r[0]));
}

/** While catching up, a stream waits for the socket to drain above this many queued bytes. */
const CATCH_UP_HIGH_WATER = 256 * 1024;
/** A closed stream whose client does not read its queued bytes within this time is cut off. */
const FLUSH_GRACE_MS = 10_000;

function uncork(stream: WatchStream): void {
  stream.uncork();
}

// A counter that advances once per tick in which some stream wrote: a stream's first write in a tick goes
// straight to the socket; further writes in the same tick (a batch of changes) are corked into one.
let tick = 0;
let tickPending = false;
function advanceTick(): void {
  tick++;
  tickPending = false;
}
function currentTick(): number {
  if (!tickPending) {
    tickPending = true;
    process.nextTick(advanceTick);
  }
  return tick;
}

/**
 * One watcher: filters changes, encodes them (sharing memoized bytes with
 * other watchers of the same format) and writes them to its HTTP response.
 * Its per-watcher state is a handful of fields; the response's socket
 * buffer is its queue. Writes in one tick are corked into one syscall.
 */
export class WatchStream implements CacheSubscriber {
  /** The newest revision this watcher has been given or has skipped. */
  from = 0;
  /** A change that cannot be decrypted ends the watch with an error (CacheSubscriber). */
  readonly receivesUnreadable = true;
  /** True once joined to the cache's live feed. */
  live = false;
  closed = false;
  /** When the server ends the watch (ms since the epoch). */
  deadline: number;
  /** When the next periodic BOOKMARK is due; 0 when bookmarks are off. */
  nextBookmark: number;
  private columnsSent = false;
  private corked = false;
  private lastTick = -1;
  /** The connection, written directly with pre-framed chunks; undefined when the response is not chunked (HTTP/1.0). */
  private readonly sock: Socket | undefined;
  /** Set when the watched version converts through a CRD conversion webhook: events are converted, in order, before they are written. */
  private readonly remote: RemoteConversion | undefined;
  /** The last queued write of a converting stream (writes wait for the conversions before them). */
  private tail: Promise<void> | undefined;

  constructor(
    private readonly owner: WatchStreamOwner,
    readonly res: ServerResponse,
    readonly bucket: string,
    readonly filter: WatchFilter,
    readonly format: WatchFormat,
    deadline: number,
    nextBookmark: number,
  ) {
    this.deadline = deadline;
    this.nextBookmark = nextBookmark;
    this.sock = res.chunkedEncoding && res.socket ? res.socket : undefined;
    this.remote = format.def.custom?.remote;
  }

  /** Bytes written but not yet taken by the client's connection. */
  get queuedBytes(): number {
    return this.sock ? this.sock.writableLength : this.res.writableLength;
  }

  /** Feeds a live change from the cache (CacheSubscriber). */
  onChange(change: CachedChange): void {
    this.offer(change, true);
  }

  /** The cache ended the live feed (reset or shutdown). */
  onEnd(reason: string): void {
    this.close(reason);
  }

  /**
   * Offers one change (from the cache or the change log): skipped when at
   * or below {@link from}; otherwise {@link from} advances and the change is
   * written if the watcher sees it. `memoize` shares the encoded bytes via
   * the cached change.
   */
  offer(change: ChangeEvent | CachedChange, memoize: boolean): void {
    if (change.revision <= this.from || this.closed) return;
    this.from = change.revision;
    const f = this.filter;
    // Catch-up offers every change of the window or the log, so the tenant and resource are checked here too.
    if (change.key.resource !== f.resource || change.key.tenant !== f.tenant) return;
    if (f.namespace !== undefined && change.key.namespace !== f.namespace) return;
    if (f.name !== undefined && change.key.name !== f.name) return;
    if (change.unreadable !== undefined) {
      this.failUnreadable(change);
      return;
    }
    const object = change.object as KubeObject;
    const prev = change.prevObject as KubeObject | null;
    // As upstream's cacher: an object entering the selection is ADDED, one leaving it DELETED (its old state at this revision).
    const nowIn = change.type !== 'DELETED' && (f.matches === undefined || f.matches(object));
    const wasIn = prev !== null && (f.matches === undefined || f.matches(prev));
    let type: WatchEventType;
    let variant: 'new' | 'old' = 'new';
    if (nowIn) type = wasIn ? 'MODIFIED' : 'ADDED';
    else if (wasIn) {
      type = 'DELETED';
      if (change.type !== 'DELETED') variant = 'old';
    } else return;
    const shown = variant === 'new' ? object : (withResourceVersion(prev!, change.revision) as KubeObject);
    const cols = this.takeColumns();
    const remote = this.remote;
    if (remote) {
      const converted = memoize ? sharedConversion(change, remote, variant, shown) : remote.fromStored([shown]).then((r) => r[0]);
      // Unhandled until its turn comes: the queued write awaits it in order.
      converted.catch(() => undefined);
      this.later(async () => encodeEvent(this.format, type, await converted, cols));
      return;
    }
    const bytes = memoize
      ? cachedEventBytes(this.format, change as CachedChange, type, variant, shown, cols)
      : encodeEvent(this.format, type, shown, cols);
    this.write(bytes);
  }

  /**
   * A change of this watch's objects that cannot be decrypted (its key is no
   * longer configured): as upstream's watch on a value it cannot transform,
   * an ERROR event with the storage's internal error, then the end of the
   * watch. Other watches go on.
   */
  private failUnreadable(change: ChangeEvent | CachedChange): void {
    const bytes = errorBytes(this.format, unreadableChangeError(change).status);
    const fail = () => {
      if (this.closed) return;
      this.write(bytes);
      this.close('error');
    };
    // A converting stream ends after the events queued before this one.
    if (this.tail) this.tail = this.tail.then(fail);
    else fail();
  }

  /**
   * Queues a write whose bytes need a conversion call: written after every
   * write queued before it. A failed conversion ends the watch with an
   * ERROR event (500, upstream's conversion message), as upstream's watch
   * ends when an event cannot be decoded.
   */
  private later(make: () => Promise<Buffer>): void {
    const run = async (): Promise<void> => {
      if (this.closed) return;
      let bytes: Buffer;
      try {
        bytes = await make();
      } catch (err) {
        if (this.closed) return;
        const status = err instanceof ApiError ? err.status : ApiError.internal(err instanceof Error ? err.message : String(err)).status;
        this.write(errorBytes(this.format, status));
        this.close('error');
        return;
      }
      this.write(bytes);
    };
    this.tail = (this.tail ?? Promise.resolve()).then(run);
  }

  /** Writes `bytes` now, or after the queued conversions of a converting stream. */
  private writeInOrder(bytes: Buffer): void {
    if (this.tail) this.later(async () => bytes);
    else this.write(bytes);
  }

  /** Moves {@link from} to `revision` (a catch-up read found nothing for this watcher up to it). */
  skipTo(revision: number): void {
    if (revision > this.from) this.from = revision;
  }

  /** Writes the objects of one page of the initial state as ADDED (a converting stream converts the page in one call). */
  sendInitial(objs: KubeObject[]): void {
    const remote = this.remote;
    if (!remote) {
      for (const obj of objs) this.write(encodeEvent(this.format, 'ADDED', obj, this.takeColumns()));
      return;
    }
    if (objs.length === 0) return;
    const converted = remote.fromStored(objs, true);
    // Unhandled until its turn comes: the queued writes below await it in order.
    converted.catch(() => undefined);
    objs.forEach((_, i) => {
      const cols = this.takeColumns();
      this.later(async () => encodeEvent(this.format, 'ADDED', (await converted)[i], cols));
    });
  }

  /** Writes a BOOKMARK at `revision`; `bytes` may be shared with other watchers of the same format. */
  sendBookmark(revision: number, initialEventsEnd: boolean, shared?: (withColumns: boolean) => Buffer): void {
    const cols = this.takeColumns();
    this.writeInOrder(shared ? shared(cols) : bookmarkBytes(this.format, revision, initialEventsEnd, cols));
  }

  /** Writes an ERROR event with `status`. */
  sendError(status: StatusBody): void {
    this.writeInOrder(errorBytes(this.format, status));
  }

  /** While catching up: resolves when the conversions queued so far are written and the socket has room again (or the stream closed). */
  async drain(): Promise<void> {
    if (this.tail) await this.tail;
    if (this.closed || this.queuedBytes <= CATCH_UP_HIGH_WATER) return;
    this.uncork();
    await Promise.race([once(this.sock ?? this.res, 'drain'), once(this.res, 'close')]).catch(() => undefined);
  }

  /** Ends the response cleanly (the client re-watches from its last revision) and stops the feed. */
  close(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.live = false;
    this.owner.unsubscribe(this);
    this.uncork();
    const res = this.res;
    // end() writes the terminating chunk after everything queued on the socket.
    if (!res.writableEnded && !res.destroyed) res.end();
    if (this.queuedBytes > 0 && !res.destroyed) {
      const timer = setTimeout(() => res.destroy(), FLUSH_GRACE_MS);
      timer.unref();
      res.once('close', () => clearTimeout(timer));
    }
    this.owner.streamClosed(this, reason);
  }

  /** Flushes writes corked in this tick. */
  uncork(): void {
    if (!this.corked) return;
    this.corked = false;
    const target = this.sock ?? this.res;
    if (!target.destroyed) target.uncork();
  }

  private takeColumns(): boolean {
    if (this.format.transform !== 'table' || this.columnsSent) return false;
    this.columnsSent = true;
    return true;
  }

  private write(bytes: Buffer): void {
    if (this.closed || this.res.destroyed) return;
    const target = this.sock ?? this.res;
    const now = currentTick();
    if (this.lastTick !== now) {
      this.lastTick = now;
      // What earlier ticks queued is still unread: the client is not keeping up. (This tick's own writes
      // do not count, so one large event or one large batch never evicts a reader that keeps up.)
      if (this.live && this.queuedBytes > this.owner.maxBufferBytes) {
        this.close('slow');
        return;
      }
    } else if (!this.corked) {
      this.corked = true;
      target.cork();
      process.nextTick(uncork, this);
    }
    if (this.sock) this.sock.write(bytes);
    else this.res.write(chunkPayload(bytes));
    this.owner.eventsWritten(1);
  }
}

/**
 * The ERROR a watch ends with at a change it cannot decrypt. With corrupt-object reporting on
 * (AllowUnsafeMalformedObjectDeletion), a DELETED one (an unsafe delete of an unreadable object) is upstream's
 * 500 StorageReadError, which tells informers to list again; anything else is 500 InternalError with the storage's message.
 */
export function unreadableChangeError(change: ChangeEvent | CachedChange): ApiError {
  if (change.type === 'DELETED' && corruptObjectReporting()) {
    const detail = change.unreadableDetail ?? change.unreadable;
    return new ApiError(500, 'StorageReadError', `saw a DELETED event, but object data is corrupt - data from the storage is not transformable revision=0: ${detail}`);
  }
  return ApiError.internal(change.unreadable ?? '');
}
