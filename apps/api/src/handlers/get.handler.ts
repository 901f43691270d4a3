import type { Storage } from '@plinth/storage';
import { sendObject } from '../http/response-writer.js';
import type { KubeObject } from '@plinth/apimachinery';
import { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { servedForm } from '../registry/resource-definition.js';
import { type HandlerContext, requestNamespace } from '../http/handler-context.js';
import { waitForRevision } from './revision-wait.js';
import { ApiError } from '@plinth/apimachinery';
import { getReadNeed, type StandbyReadRouter } from '../sharding/standby-read-router.js';

/**
 * GET of one object. `resourceVersion` other than "" and "0" means "not
 * older than": the newest state always satisfies it once the revision
 * exists, so only a future revision makes the request wait (then 504).
 */
export async function handleGet(ctx: HandlerContext, store: ResourceStoreService, lists: Storage, standby?: StandbyReadRouter): Promise<void> {
  const rv = ctx.query.resourceVersion;
  // Any and NotOlderThan gets may be served by a read replica that has replayed far enough (standby-read-router.ts).
  const read = await standby?.route(ctx.info.tenant, getReadNeed(rv), 'get');
  const fromStandby = read && (await standby!.get(read, ResourceStoreService.key(ctx.info.tenant, ctx.def, requestNamespace(ctx), ctx.info.name)));
  if (fromStandby) {
    const { def, info } = ctx;
    if (!fromStandby.object) throw ApiError.notFound({ group: def.group, kind: def.resource, name: info.name });
    return sendObject(ctx.req, ctx.reply, def, 200, await servedForm(def, fromStandby.object.body as KubeObject));
  }
  standby?.primaryServed(read?.replica ? undefined : read);
  if (!read?.replica) await waitForRevision(lists, rv, ctx.info.tenant);
  const found = await store.get(ctx.info.tenant, ctx.def, requestNamespace(ctx), ctx.info.name);
  sendObject(ctx.req, ctx.reply, ctx.def, 200, await servedForm(ctx.def, found.body as KubeObject));
}
