import type { Storage } from '@plinth/storage';
import { sendObject } from '../http/response-writer.js';
import type { KubeObject } from '@plinth/apimachinery';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { servedForm } from '../registry/resource-definition.js';
import { type HandlerContext, requestNamespace } from '../http/handler-context.js';
import { waitForRevision } from './revision-wait.js';

/**
 * GET of one object. `resourceVersion` other than "" and "0" means "not
 * older than": the newest state always satisfies it once the revision
 * exists, so only a future revision makes the request wait (then 504).
 */
export async function handleGet(ctx: HandlerContext, store: ResourceStoreService, lists: Storage): Promise<void> {
  const rv = ctx.query.resourceVersion;
  await waitForRevision(lists, rv, ctx.info.tenant);
  const found = await store.get(ctx.info.tenant, ctx.def, requestNamespace(ctx), ctx.info.name);
  sendObject(ctx.req, ctx.reply, ctx.def, 200, await servedForm(ctx.def, found.body as KubeObject));
}
