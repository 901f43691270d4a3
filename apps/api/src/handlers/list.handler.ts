import { isStorageError, type ListChunk, type ListCursor, type ListQuery, type Storage, type StoredObject } from '@plinth/storage';
import { listScope } from './list-scope.js';
import { ApiError, type KubeObject } from '@plinth/apimachinery';
import type { ListOptions } from '../http/options/list-options.dto.js';
import { sendList } from '../http/list-writer.js';
import type { Metrics } from '../observability/metrics.js';
import { mapStorageError } from '../resource-store/storage-errors.mapper.js';
import { type ResourceDefinition, servedForms } from '../registry/resource-definition.js';
import { decodeContinue, encodeContinue } from './continue-token.js';
import type { HandlerContext } from '../http/handler-context.js';
import { parseRevision, waitForRevision } from './revision-wait.js';
import { listReadNeed, type StaleRead, type StandbyReadRouter } from '../sharding/standby-read-router.js';

const EXPIRED_CONTINUE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/**
 * LIST with upstream's resourceVersion semantics (reference/api-concepts):
 * unset → newest; "0" → any (newest); x with limit or Exact → exactly x;
 * x otherwise (NotOlderThan) → newest once x exists. `continue` pages read
 * at the token's revision so all pages show one snapshot. A page (`limit`)
 * is read whole; an unpaginated list is read in chunks at one revision and
 * streamed (see sendList), so memory stays bounded however large the list.
 */
export async function handleList(ctx: HandlerContext, lists: Storage, opts: ListOptions, metrics: Pick<Metrics, 'listChunks'>, standby?: StandbyReadRouter): Promise<void> {
  // Any and NotOlderThan lists may be served by a read replica that has replayed far enough (standby-read-router.ts).
  const read = await standby?.route(ctx.info.tenant, listReadNeed(opts), 'list');
  const query = await listQuery(ctx, lists, opts, read);
  const fail = (err: unknown): never => failList(ctx, opts, query.after, err);
  if (opts.limit > 0) {
    const fromStandby = read && (await standby!.list(read, query));
    if (!fromStandby) standby?.primaryServed(read?.replica ? undefined : read);
    const result = fromStandby || (await lists.list(query).catch(fail));
    const listMeta: Record<string, unknown> = { resourceVersion: String(result.revision) };
    if (result.next) {
      listMeta.continue = encodeContinue(result.revision, result.next);
      if (result.remaining !== undefined && result.remaining > 0) listMeta.remainingItemCount = result.remaining;
    }
    return sendList(ctx.req, ctx.reply, ctx.def, listMeta, served(ctx.def, oneChunk(bodiesOf(result.items))));
  }
  const fromStandby = read && (await standby!.stream(read, query, lists));
  if (!fromStandby) standby?.primaryServed(read?.replica ? undefined : read);
  const chunks = fromStandby || lists.stream(query);
  // The first chunk is read before anything is sent: its errors are Status answers, and it fixes the list's revision.
  const first = await chunks.next().catch(fail);
  if (first.done) throw new Error('a list stream yields at least one chunk');
  const listMeta = { resourceVersion: String(first.value.revision) };
  return sendList(ctx.req, ctx.reply, ctx.def, listMeta, served(ctx.def, counted(first.value, chunks, () => metrics.listChunks.inc())));
}

/** Validates the options and resolves the revision and cursor to list at (waiting for a NotOlderThan revision). */
async function listQuery(ctx: HandlerContext, lists: Storage, opts: ListOptions, read: StaleRead | undefined): Promise<ListQuery> {
  const { scope, selectors: sel } = listScope(ctx, opts.labelSelector, opts.fieldSelector);
  let atRevision: number | undefined;
  let after: ListCursor | undefined;
  if (opts.continueToken) {
    if (opts.resourceVersion !== '' && opts.resourceVersion !== '0') {
      throw ApiError.badRequest('specifying resource version is not allowed when using continue');
    }
    const token = decodeContinue(opts.continueToken);
    atRevision = token.rv === -1 ? undefined : token.rv;
    after = token.after;
  } else {
    const rv = parseRevision(opts.resourceVersion);
    const exact = rv !== undefined && (opts.resourceVersionMatch === 'Exact' || (opts.limit > 0 && opts.resourceVersionMatch === ''));
    if (exact) atRevision = rv;
    // A replica chosen for NotOlderThan has the revision (a fallback to the primary then needs no wait either).
    else if (!read?.replica) await waitForRevision(lists, opts.resourceVersion, ctx.info.tenant);
  }
  return {
    ...scope,
    limit: opts.limit,
    after,
    atRevision,
    countRemaining: !sel.any,
  };
}

/** Turns a storage error of a list into its API error: an expired continue token gets 410 with a token to start over from. */
function failList(ctx: HandlerContext, opts: ListOptions, after: ListCursor | undefined, err: unknown): never {
  if (opts.continueToken && after && isStorageError(err, 'Expired')) {
    const e = new ApiError(410, 'Expired', EXPIRED_CONTINUE);
    e.status.metadata.continue = encodeContinue(-1, after);
    throw e;
  }
  return mapStorageError(err, ctx.def, '');
}

/** Each chunk in `def`'s served form: a CRD conversion webhook is called once per chunk (a page), as upstream converts a list in one call. */
async function* served(def: ResourceDefinition, chunks: AsyncGenerator<KubeObject[], void, undefined>): AsyncGenerator<KubeObject[], void, undefined> {
  if (!def.custom?.remote) return yield* chunks;
  for await (const chunk of chunks) yield await servedForms(def, chunk, true);
}

function bodiesOf(items: StoredObject[]): KubeObject[] {
  return items.map((i) => i.body as KubeObject);
}

async function* oneChunk(objects: KubeObject[]): AsyncGenerator<KubeObject[], void, undefined> {
  yield objects;
}

/** The objects of `first`, then of each further chunk as it is pulled; calls `count` for every chunk. */
async function* counted(first: ListChunk, rest: AsyncGenerator<ListChunk, void, undefined>, count: () => void): AsyncGenerator<KubeObject[], void, undefined> {
  count();
  yield bodiesOf(first.items);
  for await (const chunk of rest) {
    count();
    yield bodiesOf(chunk.items);
  }
}
