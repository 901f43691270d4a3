import { type ChangeLogRepository, isStorageError, type KeyFieldRequirement, type LabelRequirementLike, type ListCursor, type Storage, type WatchCache } from '@plinth/storage';
import type { KubeObject } from '@plinth/apimachinery';
import type { WatchStream } from './watch-stream.js';

/** Where a watch starts, resolved from its resourceVersion options (see the watch handler). */
export interface WatchPlan {
  /** Send the current state as synthetic ADDED events first, then the changes after it. */
  initial: boolean;
  /** Without `initial`: send the changes after this revision. */
  from: number;
  /** After the initial state, a BOOKMARK annotated k8s.io/initial-events-end (streaming lists). */
  initialEventsEnd: boolean;
}

/** The list query of a watch's initial state (what the list handler would ask for). */
export interface InitialStateQuery {
  tenant: string;
  resource: string;
  namespace?: string;
  labelRequirements: LabelRequirementLike[];
  fieldRequirements: KeyFieldRequirement[];
  filter?: (body: Record<string, unknown>) => boolean;
}

/** What starting a watch reads from. */
export interface WatchStartDeps {
  lists: Storage;
  changes: ChangeLogRepository;
  cache: WatchCache;
  /**
   * Starts below this revision read the change log, not the cache: a moved
   * tenant's shard holds its earlier changes only in the log (copies the
   * relay never publishes), so the cache window says nothing about them.
   */
  logFrom?: number;
  /**
   * Reads a batch of the change log from a read replica that has replayed
   * the batch's start (StandbyReadRouter.catchUp); undefined when the
   * primary must (none, behind, failing, or no progress there).
   */
  standby?: { catchUp: (...args: Parameters<ChangeLogRepository['changesInScope']>) => Promise<Awaited<ReturnType<ChangeLogRepository['changesInScope']>> | undefined> };
}

const PAGE = 500;
/** A stream joins the live feed in one tick once at most this many cached changes are left to send. */
const SYNC_JOIN_MAX = 256;
const CATCH_UP_BATCH = 500;

/**
 * Streams the initial state (if planned) in pages of one consistent
 * snapshot, then joins the live feed from the snapshot's revision.
 * Resolves with that revision.
 */
async function sendInitialState(stream: WatchStream, q: InitialStateQuery, lists: Storage): Promise<number> {
  let after: ListCursor | undefined;
  let atRevision: number | undefined;
  for (;;) {
    const page = await lists.list({ ...q, limit: PAGE, after, atRevision });
    atRevision = page.revision;
    stream.sendInitial(page.items.map((item) => item.body as KubeObject));
    if (!page.next || stream.closed) return page.revision;
    after = page.next;
    await stream.drain();
  }
}

/**
 * Brings `stream` from revision `stream.from` to the live feed without a
 * gap or a repeat: changes older than the cache window come from the change
 * log in PostgreSQL, then from the window; the last few are sent and the
 * stream subscribed in the same tick, so no change can slip in between.
 * Throws StorageError Expired when the changes after `stream.from` were
 * compacted away.
 */
async function join(stream: WatchStream, deps: WatchStartDeps, subscribe: () => void, labels: LabelRequirementLike[]): Promise<void> {
  // The label index (migration 0018) narrows the log's read to the changes that may match; once a batch comes back
  // full, the selector matches densely here and the plain index range (linear in the changes read) serves the rest.
  let byLabels = labels.length > 0;
  for (;;) {
    if (stream.closed) return;
    const cached = stream.from >= (deps.logFrom ?? 0) ? deps.cache.since(stream.from) : undefined;
    if (cached && cached.length <= SYNC_JOIN_MAX) {
      for (const c of cached) stream.offer(c, true);
      subscribe();
      return;
    }
    if (cached) {
      for (const c of cached.slice(0, SYNC_JOIN_MAX)) stream.offer(c, true);
    } else {
      // Older than the window: the log, read as the index range of this watch's tenant and resource only.
      const f = stream.filter;
      const scope = { tenant: f.tenant, resource: f.resource, namespace: f.namespace, name: f.name };
      const args = [stream.from, CATCH_UP_BATCH, scope, byLabels ? labels : undefined] as const;
      const { events, scannedTo, indexed } = (await deps.standby?.catchUp(...args)) ?? (await deps.changes.changesInScope(...args));
      if (indexed && events.length >= CATCH_UP_BATCH) byLabels = false;
      for (const c of events) stream.offer(c, false);
      // Nothing else of this scope up to scannedTo: the stream resumes from there (the window, next turn).
      stream.skipTo(scannedTo);
    }
    await stream.drain();
  }
}

/**
 * Runs a watch from its plan until it is live. Failures end the stream
 * with an ERROR event, as upstream does after the 200 has been sent: 410
 * Expired (`too old resource version: X (Y)`) when the requested history is
 * gone, 500 otherwise.
 */
export async function runWatch(
  stream: WatchStream,
  plan: WatchPlan,
  query: InitialStateQuery,
  deps: WatchStartDeps,
  subscribe: () => void,
  onFailure: (err: unknown) => void,
): Promise<void> {
  try {
    stream.from = plan.initial ? await sendInitialState(stream, query, deps.lists) : plan.from;
    if (plan.initialEventsEnd && !stream.closed) stream.sendBookmark(stream.from, true);
    await join(stream, deps, subscribe, query.labelRequirements);
  } catch (err) {
    if (stream.closed) return;
    if (isStorageError(err, 'Expired')) {
      stream.sendError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: err.message, reason: 'Expired', code: 410 });
    } else {
      onFailure(err);
      const message = err instanceof Error ? err.message : String(err);
      stream.sendError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `an error on the server ("${message}") has prevented the request from succeeding`, reason: 'InternalError', code: 500 });
    }
    stream.close('error');
  }
}
