import { type ListResult, type ObjectListRepository, isStorageError } from '@plinth/storage';
import { ApiError } from '@plinth/apimachinery';
import type { ListOptions } from '../http/options/list-options.dto.js';
import { sendList } from '../http/response-writer.js';
import type { KubeObject } from '@plinth/apimachinery';
import { mapStorageError } from '../store/storage-errors.mapper.js';
import { decodeContinue, encodeContinue } from './continue-token.js';
import { type HandlerContext, requestNamespace } from '../http/handler-context.js';
import { compileSelectors } from './list-selectors.js';
import { parseRevision, waitForRevision } from './revision-wait.js';

const EXPIRED_CONTINUE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/**
 * LIST with upstream's resourceVersion semantics (reference/api-concepts):
 * unset → newest; "0" → any (newest); x with limit or Exact → exactly x;
 * x otherwise (NotOlderThan) → newest once x exists. `continue` pages read
 * at the token's revision so all pages show one snapshot.
 */
export async function handleList(ctx: HandlerContext, lists: ObjectListRepository, opts: ListOptions): Promise<void> {
  const { def } = ctx;
  const sel = compileSelectors(def, opts.labelSelector, opts.fieldSelector);
  let atRevision: number | undefined;
  let after;
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
    else await waitForRevision(lists, opts.resourceVersion, def);
  }
  const namespace = def.namespaced && ctx.info.namespace ? requestNamespace(ctx) : undefined;
  let result: ListResult;
  try {
    result = await lists.list({
      tenant: ctx.info.tenant,
      resource: def.storageResource,
      namespace,
      labelRequirements: sel.labelRequirements,
      fieldRequirements: sel.keyFieldRequirements,
      filter: sel.filter ? (b) => sel.filter!(b as KubeObject) : undefined,
      limit: opts.limit,
      after,
      atRevision,
      countRemaining: !sel.any,
    });
  } catch (err) {
    if (opts.continueToken && after && isStorageError(err, 'Expired')) {
      const e = new ApiError(410, 'Expired', EXPIRED_CONTINUE);
      e.status.metadata.continue = encodeContinue(-1, after);
      throw e;
    }
    mapStorageError(err, def, '');
  }
  const listMeta: Record<string, unknown> = { resourceVersion: String(result.revision) };
  if (result.next) {
    listMeta.continue = encodeContinue(result.revision, result.next);
    if (result.remaining !== undefined && result.remaining > 0) listMeta.remainingItemCount = result.remaining;
  }
  sendList(ctx.req, ctx.reply, def, result.items.map((i) => i.body as KubeObject), listMeta);
}
