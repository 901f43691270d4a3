import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import {
  type ChangeLogRepository,
  type ListChunk,
  type ListCursor,
  type ListQuery,
  type ListResult,
  type ObjectKey,
  type ReadNeed,
  StandbyBehind,
  isStorageError,
  type StandbyReads,
  type StandbyReplica,
  type Storage,
  type StoredObject,
} from '@plinth/storage';
import type { ListOptions } from '../http/options/list-options.dto.js';

/** Why a read that a standby could have served went to the primary. */
type FallbackReason = 'unavailable' | 'behind' | 'error';

/** A read that may go to a standby: what it needs, and the replica chosen (undefined: the primary serves it). */
export interface StaleRead {
  need: ReadNeed;
  replica: StandbyReplica | undefined;
  verb: 'get' | 'list' | 'watch';
}

/**
 * What a list allows by upstream's rules (reference/api-concepts, "Semantics
 * for get and list"): `resourceVersion=0` is Any, a revision with no limit
 * (or with NotOlderThan) is NotOlderThan; unset (the newest: a consistent
 * read), Exact, a revision with a limit (Exact) and continue tokens (Exact
 * at the token's revision) are undefined: those read the primary.
 */
export function listReadNeed(opts: ListOptions): ReadNeed | undefined {
  if (opts.continueToken || opts.resourceVersionMatch === 'Exact') return undefined;
  if (opts.resourceVersion === '0') return {};
  if (!/^\d{1,15}$/.test(opts.resourceVersion)) return undefined;
  if (opts.limit > 0 && opts.resourceVersionMatch === '') return undefined;
  return { notOlderThan: Number(opts.resourceVersion) };
}

/** What a get allows: `0` is Any, a revision is NotOlderThan, unset is the newest (undefined: the primary). */
export function getReadNeed(resourceVersion: string | undefined): ReadNeed | undefined {
  if (resourceVersion === '0') return {};
  if (resourceVersion === undefined || !/^\d{1,15}$/.test(resourceVersion)) return undefined;
  return { notOlderThan: Number(resourceVersion) };
}

/**
 * Sends the reads upstream lets be stale to the read replica of their
 * tenant's shard when it can serve them (StandbyReplica.serves), and falls
 * back to the primary, never to an error, when it cannot: not configured,
 * down, unchecked, lagging, behind the revision asked for, failing or slow
 * (its statement timeout). Counts where each such read was served.
 */
export class StandbyReadRouter {
  private readonly served: Counter<'verb' | 'served_by'>;
  // Watches' catch-up batches count as verb "watch" (one per batch read from the log).
  private readonly fallbacks: Counter<'verb' | 'reason'>;

  constructor(
    private readonly reads: StandbyReads | undefined,
    registry: Registry,
    private readonly logger: Logger,
  ) {
    this.served = new Counter({
      name: 'plinth_stale_reads_total',
      help: 'Gets and lists that allow a stale answer (resourceVersion=0 or NotOlderThan), and batches of watch catch-up from the change log (verb "watch"), by where they were served: standby or primary.',
      labelNames: ['verb', 'served_by'] as const,
      registers: [registry],
    });
    this.fallbacks = new Counter({
      name: 'plinth_read_replica_fallbacks_total',
      help: 'Reads that could have gone to a read replica but were served by the primary: unavailable (none, down, lagging or unchecked), behind (older than the revision asked for), error (failed or timed out on the standby).',
      labelNames: ['verb', 'reason'] as const,
      registers: [registry],
    });
    const replicas = reads;
    new Gauge({
      name: 'plinth_read_replica_lag_seconds',
      help: 'How long each shard\'s read replica has been behind its primary at its last probe (-1: down or not usable).',
      labelNames: ['shard'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const [shard, r] of replicas?.all() ?? []) {
          const s = r.state();
          this.set({ shard }, s ? s.lagMs / 1000 : -1);
        }
      },
    });
  }

  /** Whether any shard has a read replica. */
  get enabled(): boolean {
    return (this.reads?.all().length ?? 0) > 0;
  }

  /** Where a read of `tenant` needing `need` goes (undefined when it must read the primary: not a stale read). */
  async route(tenant: string, need: ReadNeed | undefined, verb: StaleRead['verb']): Promise<StaleRead | undefined> {
    if (!need) return undefined;
    const replica = this.reads ? await this.reads.choose(tenant, need).catch(() => undefined) : undefined;
    return { need, replica, verb };
  }

  /** A stale read was served by the primary (counted, with why when a replica exists). */
  primaryServed(read: StaleRead | undefined, reason: FallbackReason = 'unavailable'): void {
    if (!read) return;
    this.served.inc({ verb: read.verb, served_by: 'primary' });
    if (this.enabled) this.fallbacks.inc({ verb: read.verb, reason });
  }

  private failed(read: StaleRead, err: unknown): void {
    read.replica!.failed();
    const reason: FallbackReason = err instanceof StandbyBehind ? 'behind' : 'error';
    this.logger.debug({ err: (err as Error).message, reason }, 'read replica: the read goes to the primary');
    this.primaryServed(read, reason);
  }

  /** One page from the standby, or undefined when the primary must serve it (counted). */
  async list(read: StaleRead, query: ListQuery): Promise<ListResult | undefined> {
    if (!read.replica) return undefined;
    try {
      const result = await this.reads!.lists.list(query);
      this.checkRevision(read, result.revision);
      this.served.inc({ verb: 'list', served_by: 'standby' });
      return result;
    } catch (err) {
      this.failed(read, err);
      return undefined;
    }
  }

  /**
   * A whole list streamed from the standby, its first chunk read (so a
   * failure falls back before anything is sent); undefined when the primary
   * must serve it. A later chunk that fails on the standby is read from the
   * primary at the list's revision, after the last item sent.
   */
  async stream(read: StaleRead, query: ListQuery, primary: Pick<Storage, 'stream'>): Promise<AsyncGenerator<ListChunk, void, undefined> | undefined> {
    if (!read.replica) return undefined;
    const chunks = this.reads!.lists.stream(query);
    let first: IteratorResult<ListChunk, void>;
    try {
      first = await chunks.next();
      if (first.done) throw new Error('a list stream yields at least one chunk');
      this.checkRevision(read, first.value.revision);
    } catch (err) {
      void chunks.return(undefined).catch(() => undefined);
      this.failed(read, err);
      return undefined;
    }
    this.served.inc({ verb: 'list', served_by: 'standby' });
    return this.continued(first.value, chunks, query, primary, read.replica);
  }

  private async *continued(first: ListChunk, rest: AsyncGenerator<ListChunk, void, undefined>, query: ListQuery, primary: Pick<Storage, 'stream'>, replica: StandbyReplica): AsyncGenerator<ListChunk, void, undefined> {
    let after: ListCursor | undefined = lastKey(first) ?? query.after;
    yield first;
    try {
      for await (const chunk of rest) {
        after = lastKey(chunk) ?? after;
        yield chunk;
      }
      return;
    } catch (err) {
      replica.failed();
      this.logger.debug({ err: (err as Error).message }, 'read replica: a list chunk failed; the list goes on from the primary at its revision');
    }
    // Rows after the last item sent (filtered ones are read again and filtered again), at the same revision.
    yield* primary.stream({ ...query, after, atRevision: first.revision });
  }

  /**
   * One object from the standby: `{ object }` (undefined when it does not
   * exist at the standby's revision), or undefined when the primary must
   * serve it (counted).
   */
  async get(read: StaleRead, key: ObjectKey): Promise<{ object: StoredObject | undefined } | undefined> {
    if (!read.replica) return undefined;
    try {
      const { object } = await this.reads!.get(read.replica, key, read.need);
      this.served.inc({ verb: 'get', served_by: 'standby' });
      return { object };
    } catch (err) {
      this.failed(read, err);
      return undefined;
    }
  }

  /**
   * One batch of a watch's catch-up from the change log (changes of the
   * scope after `after`), read on the standby when it has replayed `after`;
   * undefined when the primary must read it: no replica serves, the read
   * failed, or it made no progress (a standby behind the watch cache's
   * window would otherwise be asked again and again).
   */
  async catchUp(...args: Parameters<ChangeLogRepository['changesInScope']>): Promise<Awaited<ReturnType<ChangeLogRepository['changesInScope']>> | undefined> {
    const [after, , scope] = args;
    const read = await this.route(scope.tenant, { notOlderThan: after }, 'watch');
    if (!read?.replica) {
      this.primaryServed(read);
      return undefined;
    }
    try {
      const batch = await this.reads!.changes.changesInScope(...args);
      if (batch.events.length > 0 || batch.scannedTo > after) {
        this.served.inc({ verb: 'watch', served_by: 'standby' });
        return batch;
      }
      this.primaryServed(read, 'behind');
    } catch (err) {
      // Expired there is Expired on the primary too (same history, compaction replicated): the primary says so, no back-off.
      if (isStorageError(err, 'Expired')) this.primaryServed(read, 'behind');
      else this.failed(read, err);
    }
    return undefined;
  }

  /** Closes the read replicas' pools. */
  async close(): Promise<void> {
    await this.reads?.close();
  }

  private checkRevision(read: StaleRead, revision: number): void {
    const want = read.need.notOlderThan;
    if (want !== undefined && revision < want) throw new StandbyBehind(`the read replica answered at ${revision}, before ${want}`);
  }
}

function lastKey(chunk: ListChunk): ListCursor | undefined {
  const last = chunk.items[chunk.items.length - 1];
  return last && { namespace: last.key.namespace, name: last.key.name };
}
