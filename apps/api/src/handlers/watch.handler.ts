import type { KeyFieldRequirement, Storage } from '@plinth/storage';
import { listScope } from './list-scope.js';
import type { ListOptions } from '../http/options/list-options.dto.js';
import { negotiate } from '../http/negotiation.js';
import { cborServed } from '../http/cbor-serving.js';
import type { IncludeObject } from '../table/table-convertor.js';
import { watchFormat } from '../watch/watch-encoder.js';
import type { WatchPlan } from '../watch/watch-start.js';
import type { WatchService } from '../watch/watch.service.js';
import type { HandlerContext } from '../http/handler-context.js';
import { parseRevision, waitForRevision } from './revision-wait.js';

function includeObjectOf(query: Record<string, string>): IncludeObject {
  const v = query.includeObject;
  return v === 'None' || v === 'Object' ? v : 'Metadata';
}

/**
 * Resolves where a watch starts, per the API concepts' tables:
 * - legacy (no sendInitialEvents): unset or "0" → the current state as
 *   ADDED, then its changes; x → the changes after x;
 * - sendInitialEvents=true (requires NotOlderThan): the state not older than
 *   x (newest when unset or "0") as ADDED, a BOOKMARK marking the end of
 *   the initial events when bookmarks are allowed, then changes;
 * - sendInitialEvents=false: unset → from the newest revision, "0" → from
 *   any (this replica's newest), x → after x; no initial events.
 * Waits (then 504) when x is a revision that does not exist yet.
 */
async function planWatch(opts: ListOptions, lists: Storage, cacheRevision: number, ctx: HandlerContext): Promise<WatchPlan> {
  const rv = parseRevision(opts.resourceVersion);
  if (rv !== undefined) await waitForRevision(lists, opts.resourceVersion, ctx.info.tenant);
  if (opts.sendInitialEvents === true) {
    return { initial: true, from: 0, initialEventsEnd: opts.allowWatchBookmarks };
  }
  if (opts.sendInitialEvents === false) {
    if (rv !== undefined) return { initial: false, from: rv, initialEventsEnd: false };
    const from = opts.resourceVersion === '0' ? cacheRevision : await lists.currentRevision(ctx.info.tenant);
    return { initial: false, from, initialEventsEnd: false };
  }
  if (rv !== undefined) return { initial: false, from: rv, initialEventsEnd: false };
  return { initial: true, from: 0, initialEventsEnd: false };
}

/**
 * WATCH (`?watch=true|1` on a list path, or on an object path): validates
 * selectors, Accept and resourceVersion before answering, so those errors
 * are plain HTTP errors; then hands over to the watch service, which answers
 * 200 and streams `{"type","object"}` events.
 */
export async function handleWatch(ctx: HandlerContext, watch: WatchService, lists: Storage, opts: ListOptions): Promise<void> {
  const { def, info } = ctx;
  const { scope, selectors: sel } = listScope(ctx, opts.labelSelector, opts.fieldSelector);
  const format = watchFormat(def, negotiate(ctx.req.headers.accept as string | undefined, true, cborServed(ctx.req)), includeObjectOf(ctx.query));
  const placement = watch.placementOf(info.tenant);
  const plan = await planWatch(opts, lists, watch.cacheOf(info.tenant)?.revision ?? 0, ctx);
  // Changes older than the tenant belong to a deleted tenant of the same name: never replay them.
  if (!plan.initial && ctx.tenantSince !== undefined) plan.from = Math.max(plan.from, ctx.tenantSince);
  const { namespace } = scope;
  const name = info.name || undefined;
  const fieldRequirements: KeyFieldRequirement[] = [...scope.fieldRequirements];
  if (name !== undefined) fieldRequirements.push({ field: 'metadata.name', operator: '=', value: name });
  watch.serve(ctx.reply, {
    def,
    tenant: info.tenant,
    shard: placement.shard,
    arrivedRevision: placement.since,
    user: ctx.user.username,
    filter: { tenant: info.tenant, resource: def.storageResource, namespace, name, matches: sel.any ? sel.matches : undefined },
    format,
    plan,
    query: { ...scope, fieldRequirements },
    allowBookmarks: opts.allowWatchBookmarks,
    timeoutSeconds: opts.timeoutSeconds,
    warnings: ctx.warnings,
  });
}
