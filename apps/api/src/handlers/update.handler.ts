import { ApiError } from '@plinth/apimachinery';
import { sendObject, setWarnings } from '../http/response-writer.js';
import type { KubeObject } from '@plinth/apimachinery';
import type { ResourceStrategy } from '../registry/resource-definition.js';
import { cloneJson, type ResourceStoreService } from '../store/resource-store.service.js';
import { decodeObject } from './decode-object.js';
import type { HandlerContext } from './handler-context.js';
import { writeContext } from './write-handler-support.js';

/**
 * PUT of one object (or a subresource, with `strategy`). A body without
 * metadata.resourceVersion is an unconditional update; with one, a stale
 * value is 409 Conflict.
 */
export async function handleUpdate(ctx: HandlerContext, store: ResourceStoreService, strategy?: ResourceStrategy): Promise<void> {
  const { wctx, opts } = writeContext(ctx, 'UpdateOptions');
  const obj = decodeObject(ctx.body, ctx.req.headers['content-type'], ctx.def, opts.fieldValidation, ctx.warnings);
  const name = ctx.info.name;
  if (obj.metadata.name !== undefined && obj.metadata.name !== name) {
    throw ApiError.badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`);
  }
  if (ctx.def.namespaced && obj.metadata.namespace && obj.metadata.namespace !== wctx.namespace) {
    throw ApiError.badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  const rv = obj.metadata.resourceVersion;
  if ((rv === undefined || rv === '') && !(strategy ?? ctx.def.strategy).allowUnconditionalUpdate) {
    throw ApiError.invalid({ group: ctx.def.group, kind: ctx.def.kind, name }, [
      { type: 'FieldValueInvalid', field: 'metadata.resourceVersion', value: '', detail: 'must be specified for an update' },
    ]);
  }
  const { object } = await store.update(wctx, name, () => cloneJson(obj) as KubeObject, strategy);
  setWarnings(ctx.reply, ctx.warnings);
  sendObject(ctx.req, ctx.reply, ctx.def, 200, object);
}
