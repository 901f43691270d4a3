import { ApiError } from '@plinth/apimachinery';
import { sendObject, setWarnings } from '../http/response-writer.js';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { decodeObject } from '../http/decode-object.js';
import { cborServed } from '../http/cbor-serving.js';
import type { HandlerContext } from '../http/handler-context.js';
import { writeContext } from './write-handler-support.js';

/** POST to a collection: 201 with the created object (dry run: the would-be object). */
export async function handleCreate(ctx: HandlerContext, store: ResourceStoreService): Promise<void> {
  if (ctx.info.name) throw ApiError.methodNotAllowed(`the server does not allow this method on the requested resource`);
  const { wctx, opts } = writeContext(ctx, 'CreateOptions');
  const obj = decodeObject(ctx.body, ctx.req.headers['content-type'], ctx.def, opts.fieldValidation, ctx.warnings, cborServed(ctx.req));
  const created = await store.create(wctx, obj);
  setWarnings(ctx.reply, ctx.warnings);
  sendObject(ctx.req, ctx.reply, ctx.def, 201, created);
}
