import type { CachedChange } from '@plinth/storage';
import type { Controller } from './controller.js';
import type { ControllerManager } from './controller-manager.js';
import type { FollowResource, InformerEvent, SharedInformer } from './shared-informer.js';
import type { WorkQueue } from './work-queue.js';

/** Keys to queue; nothing (undefined, an empty list) queues nothing. */
export type Keys = string | Iterable<string> | undefined | void;

/** Where a controller's keys come from. */
export type KeySource =
  /** The events of a shared informer (with its resync, if any): the keys each event queues. */
  | { informer: SharedInformer; keys: (event: InformerEvent) => Keys; resyncPeriodMs?: number }
  /**
   * Changes of a storage resource straight from the change feed, cached by
   * nobody (for a controller that reacts to every resource, which no cache
   * could hold); `onReset` gives the keys to queue when the feed had a hole.
   */
  | { follow: FollowResource; resource: string; keys: (change: CachedChange) => Keys; onReset?: () => Keys }
  /** Keys queued every `everyMs` (a periodic sweep) and once at start. */
  | { everyMs: number; keys: () => Keys };

/** Keys from an informer's events (typed helper for {@link KeySource}). */
export function onInformer(informer: SharedInformer, keys: (event: InformerEvent) => Keys, resyncPeriodMs?: number): KeySource {
  return { informer, keys, resyncPeriodMs };
}

/** Keys from the change feed of `resource`, uncached (typed helper for {@link KeySource}). */
export function onChanges(follow: FollowResource, resource: string, keys: (change: CachedChange) => Keys, onReset?: () => Keys): KeySource {
  return { follow, resource, keys, onReset };
}

/** Keys every `everyMs` and at start (typed helper for {@link KeySource}). */
export function every(everyMs: number, keys: () => Keys): KeySource {
  return { everyMs, keys };
}

/** How the base builds a controller. */
export interface InformerControllerOptions {
  /** The controller's name: the election's, the queue's and the metrics' label. */
  name: string;
  /** Keys reconciled at once (a key is never reconciled twice at once). */
  workers: number;
  queues: Pick<ControllerManager, 'queue'>;
}

function* keysOf(keys: Keys): Iterable<string> {
  if (keys === undefined) return;
  if (typeof keys === 'string') yield keys;
  else yield* keys;
}

/**
 * The controller base (upstream's controller pattern): a controller
 * supplies where its keys come from ({@link sources}: informer events,
 * the change feed, periodic sweeps) and what reconciling one key does
 * ({@link reconcile}); the base runs the work queue (a key queued once
 * however often it is added, never reconciled twice at once, requeued
 * with backoff when reconcile throws), starts the informers it uses when
 * the controller starts (a handler added to a synced informer is told of
 * every cached object, which is the resync a new leader needs) and stops
 * them with it. Reconcile reads from the informers' caches; writes go
 * through the store.
 */
export abstract class InformerController implements Controller {
  readonly name: string;
  protected readonly queue: WorkQueue;
  private stops: (() => void)[] = [];
  private held: SharedInformer[] = [];
  /** Resolves once every informer of the current run has synced: workers wait for it, so a reconcile never reads a cache still listing. */
  private synced: Promise<unknown> = Promise.resolve();
  private abortSync: () => void = () => undefined;

  constructor(options: InformerControllerOptions) {
    this.name = options.name;
    this.queue = options.queues.queue({ name: options.name, workers: options.workers, process: (key) => this.process(key) });
  }

  private async process(key: string): Promise<void> {
    await this.synced;
    if (this.queue.active) await this.reconcile(key);
  }

  /** Where the keys come from; asked at every start. */
  protected abstract sources(): KeySource[];

  /** Brings the world in line for `key`. Throwing retries it with backoff; it may run again any time (idempotent). */
  protected abstract reconcile(key: string): Promise<void>;

  /** Queues keys (ignored unless the controller runs). */
  protected enqueue(keys: Keys): void {
    for (const key of keysOf(keys)) this.queue.add(key);
  }

  /** Starts the queue and its sources (informers list in the background; reconciles wait until they have synced). */
  start(): void {
    const sources = this.sources();
    const informers = sources.flatMap((s) => ('informer' in s ? [s.informer] : []));
    const aborted = new Promise<void>((resolve) => (this.abortSync = resolve));
    this.synced = Promise.race([Promise.all(informers.map((i) => i.whenSynced())), aborted]);
    this.queue.start();
    for (const source of sources) {
      if ('informer' in source) {
        source.informer.acquire();
        this.held.push(source.informer);
        this.stops.push(source.informer.addEventHandler((e) => this.enqueue(source.keys(e)), { resyncPeriodMs: source.resyncPeriodMs }));
      } else if ('follow' in source) {
        this.stops.push(source.follow(source.resource, { onChange: (c) => this.enqueue(source.keys(c)), onReset: () => this.enqueue(source.onReset?.()) }));
      } else {
        const timer = setInterval(() => this.enqueue(source.keys()), source.everyMs);
        timer.unref();
        this.stops.push(() => clearInterval(timer));
        this.enqueue(source.keys());
      }
    }
  }

  /** Stops its sources and queue (waiting for reconciles in progress), then lets go of its informers. */
  async stop(): Promise<void> {
    for (const stop of this.stops) stop();
    this.stops = [];
    this.abortSync();
    await this.queue.shutDown();
    const held = this.held;
    this.held = [];
    await Promise.all(held.map((i) => i.release()));
  }
}
