import { ApiError } from '@plinth/apimachinery';
import { sendObject, setWarnings } from '../http/response-writer.js';
import type { KubeObject } from '@plinth/apimachinery';
import type { ResourceStrategy } from '../registry/resource-definition.js';
import { cloneJson, type ResourceStoreService } from '../resource-store/resource-store.service.js';
import { decodeObject } from '../http/decode-object.js';
import { cborServed } from '../http/cbor-serving.js';
import type { HandlerContext } from '../http/handler-context.js';
import { writeContext } from './write-handler-support.js';

/**
 * PUT of one object (or a subresource, with `strategy`). A body without
 * metadata.resourceVersion is an unconditional update; with one, a stale
 * value is 409 Conflict. For kinds whose strategy allows create on update,
 * a PUT without resourceVersion to a missing name creates it (201).
 */
export async function handleUpdate(ctx: HandlerContext, store: ResourceStoreService, strategy?: ResourceStrategy): Promise<void> {
  const { wctx, opts } = writeContext(ctx, 'UpdateOptions');
  const obj = decodeObject(ctx.body, ctx.req.headers['content-type'], ctx.def, opts.fieldValidation, ctx.warnings, cborServed(ctx.req));
  const name = ctx.info.name;
  if (obj.metadata.name !== undefined && obj.metadata.name !== name) {
    throw ApiError.badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`);
  }
  if (ctx.def.namespaced && obj.metadata.namespace && obj.metadata.namespace !== wctx.namespace) {
    throw ApiError.badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  const rv = obj.metadata.resourceVersion;
  const unconditional = rv === undefined || rv === '';
  const transform = (): KubeObject => {
    // Only an update of an existing object needs a resourceVersion (a PUT that creates does not).
    if (unconditional && !(strategy ?? ctx.def.strategy).allowUnconditionalUpdate) {
      throw ApiError.invalid({ group: ctx.def.group, kind: ctx.def.kind, name }, [
        { type: 'FieldValueInvalid', field: 'metadata.resourceVersion', value: '', detail: 'must be specified for an update' },
      ]);
    }
    return cloneJson(obj) as KubeObject;
  };
  let code = 200;
  let object: KubeObject;
  try {
    ({ object } = await store.update(wctx, name, transform, strategy));
  } catch (err) {
    // Kinds whose strategy allows it (Lease, Event) are created by a PUT to a missing name, as upstream's store.Update.
    if (!(err instanceof ApiError && err.code === 404 && !strategy && ctx.def.strategy.allowCreateOnUpdate && unconditional)) throw err;
    obj.metadata.name = name;
    object = await store.create({ ...wctx, options: { ...wctx.options, kind: 'CreateOptions' } }, obj);
    code = 201;
  }
  setWarnings(ctx.reply, ctx.warnings);
  sendObject(ctx.req, ctx.reply, ctx.def, code, object);
}
