import type { Logger } from 'pino';
import { type EventExpiryRepository, type ExpiredEvent, isStorageError, type Storage } from '@plinth/storage';
import type { Controller } from '../controllers/controller.js';
import { forEachConcurrently } from '../resource-store/bounded-concurrency.js';

/** Expired Events read per page (the deletions of a page run before the next is read). */
export const EVENT_TTL_PAGE = 1000;

/** Deletions in flight at once: the write batcher groups them into batches of one tenant each. */
const DELETES_IN_FLIGHT = 64;

/** What the Event TTL controller needs. */
export interface EventTtlControllerDeps {
  expiry: EventExpiryRepository;
  objects: Storage;
  logger: Logger;
  /** PLINTH_EVENT_TTL in milliseconds. */
  ttlMs: number;
  /** Called after each page with the Events it removed (metrics, tests). */
  onExpired?: (count: number) => void;
}

/** What one sweep did. */
export interface EventTtlSweep {
  expired: number;
  pages: number;
}

/**
 * upstream's --event-ttl: an Event goes once it has not been written for the
 * TTL (kube-apiserver gives each Event an etcd lease renewed by every write).
 * One replica runs it (ControllerManager). Every `intervalMs` (a quarter of
 * the TTL, at most a minute) it sweeps: pages of expired Events, every
 * tenant and shard (EventExpiryRepository), each deleted through the store's
 * write path, conditionally on the revision it was found at, so the bytes
 * and the count leave the tenant's usage (and a namespace's quota) as each
 * batch commits and watchers see DELETED, as for any deletion. An Event
 * written again since it was found is left (a conflict): it is no longer
 * expired. Nothing runs through admission: as upstream, expiry is storage's.
 */
export class EventTtlController implements Controller {
  readonly name = 'event-ttl';
  /** How often a sweep runs, and how far apart the revision marks are. */
  readonly intervalMs: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** Set by stop(): no further sweep is scheduled and the one in progress ends after its page. */
  private stopped = false;

  constructor(private readonly deps: EventTtlControllerDeps) {
    this.intervalMs = Math.min(60_000, Math.max(50, Math.floor(deps.ttlMs / 4)));
  }

  /** Starts sweeping (the first sweep at once). */
  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops sweeping; resolves once the sweep in progress (its current page) has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /**
   * Removes every Event expired now, page by page; stops early when the
   * controller is stopped. Throws when every shard fails to answer.
   */
  async sweep(): Promise<EventTtlSweep> {
    const result: EventTtlSweep = { expired: 0, pages: 0 };
    for (;;) {
      const page = await this.deps.expiry.expired(this.deps.ttlMs, this.intervalMs, EVENT_TTL_PAGE);
      if (page.length === 0) break;
      result.pages++;
      let removed = 0;
      await forEachConcurrently(page, DELETES_IN_FLIGHT, async (e) => {
        if (await this.remove(e)) removed++;
      });
      result.expired += removed;
      this.deps.onExpired?.(removed);
      // A short page was the last; a page of only lost races would find the same rows again.
      if (page.length < EVENT_TTL_PAGE || removed === 0 || this.stopped) break;
    }
    return result;
  }

  /** Deletes one Event if it is still at the revision it was found at. False when it was not. */
  private async remove(e: ExpiredEvent): Promise<boolean> {
    try {
      await this.deps.objects.delete(e.key, e.revision);
      return true;
    } catch (err) {
      // Written again (no longer expired), deleted meanwhile, or its tenant is going: not ours to report.
      if (isStorageError(err, 'Conflict') || isStorageError(err, 'NotFound') || isStorageError(err, 'TenantTerminating')) return false;
      throw err;
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.sweep()
        .then((r) => {
          if (r.expired > 0) this.deps.logger.info({ controller: this.name, expired: r.expired, pages: r.pages }, 'expired Events removed');
        })
        .catch((err) => this.deps.logger.warn({ controller: this.name, err: (err as Error).message }, 'Event TTL sweep failed; retrying'))
        .finally(() => {
          this.running = undefined;
          this.schedule(this.intervalMs);
        });
    }, delayMs);
    this.timer.unref?.();
  }
}
