import type { Storage } from '@plinth/storage';
import { listScope } from './list-scope.js';
import { ApiError, DecodeError, isPlainObject, type KubeObject, parseJsonStrict } from '@plinth/apimachinery';
import { sendObject, sendPlain, setWarnings } from '../http/response-writer.js';
import { noteWrittenObjects } from '../http/written-object.js';
import { groupVersion, servedForm, servedForms } from '../registry/resource-definition.js';
import type { DeletePreconditions, ResourceDeleteService } from '../resource-store/resource-delete.service.js';
import type { HandlerContext } from '../http/handler-context.js';
import { writeContext } from './write-handler-support.js';
import { authorizeUnsafeDelete, type UnsafeDeleteDeps, unsafeDeleteRequested } from './unsafe-delete.js';

const POLICIES = ['Foreground', 'Background', 'Orphan'] as const;

/** The propagation policy of a DELETE (DeleteOptions body first, then the query), with the legacy orphanDependents. Throws 400 for bad values. */
function propagationOf(ctx: HandlerContext, body: Record<string, unknown>): DeletePreconditions['propagation'] {
  const policy = body.propagationPolicy ?? ctx.query.propagationPolicy;
  const orphanRaw = body.orphanDependents ?? ctx.query.orphanDependents;
  const orphan = orphanRaw === true || orphanRaw === 'true' ? true : orphanRaw === false || orphanRaw === 'false' ? false : undefined;
  if (policy !== undefined && policy !== null && orphan !== undefined) throw ApiError.badRequest('orphanDependents and propagationPolicy cannot both be set');
  if (orphan !== undefined) return orphan ? 'Orphan' : 'Background';
  if (policy === undefined || policy === null || policy === '') return undefined;
  if (!POLICIES.includes(policy as (typeof POLICIES)[number])) throw ApiError.badRequest(`propagationPolicy: Unsupported value: ${JSON.stringify(policy)}: supported values: "Foreground", "Background", "Orphan"`);
  return policy as DeletePreconditions['propagation'];
}

/** DeleteOptions from the body (and dryRun from the query or body). Throws 400 for a bad body. */
function deleteOptions(ctx: HandlerContext, unsafe?: UnsafeDeleteDeps, collection = false): { pre: DeletePreconditions; dryRunInBody: boolean; unsafe: boolean } {
  const text = ctx.body?.toString('utf8').trim() ?? '';
  if (!text) return { pre: { propagation: propagationOf(ctx, {}) }, dryRunInBody: false, unsafe: unsafeDeleteRequested(ctx, {}, collection, unsafe) };
  let body: unknown;
  try {
    body = parseJsonStrict(text).value;
  } catch (err) {
    if (err instanceof DecodeError) throw ApiError.badRequest(err.message);
    throw err;
  }
  if (!isPlainObject(body)) throw ApiError.badRequest('DeleteOptions must be a JSON object');
  const pre: DeletePreconditions = { propagation: propagationOf(ctx, body) };
  if (body.preconditions !== undefined && body.preconditions !== null) {
    if (!isPlainObject(body.preconditions)) throw ApiError.badRequest('preconditions must be an object');
    if (typeof body.preconditions.uid === 'string') pre.uid = body.preconditions.uid;
    if (typeof body.preconditions.resourceVersion === 'string') pre.resourceVersion = body.preconditions.resourceVersion;
  }
  const dry = body.dryRun;
  if (dry !== undefined && dry !== null) {
    if (!Array.isArray(dry) || dry.some((v) => v !== 'All')) {
      throw ApiError.badRequest(`Invalid dryRun: Unsupported value: ${JSON.stringify(dry)}: supported values: "All"`);
    }
  }
  return { pre, dryRunInBody: Array.isArray(dry) && dry.length > 0, unsafe: unsafeDeleteRequested(ctx, body, collection, unsafe) };
}

/**
 * DELETE of one object: 200 with the object (or a Success Status, per
 * kind, as upstream), 202 with the object while finalizers keep it.
 */
export async function handleDelete(ctx: HandlerContext, deleter: ResourceDeleteService, unsafeDeps?: UnsafeDeleteDeps): Promise<void> {
  const { wctx } = writeContext(ctx, 'DeleteOptions');
  const { pre, dryRunInBody, unsafe } = deleteOptions(ctx, unsafeDeps);
  if (dryRunInBody) wctx.dryRun = true;
  // KEP-3926: the verb is checked before anything is read, as upstream's admission check does.
  if (unsafe) await authorizeUnsafeDelete(ctx, unsafeDeps!);
  const outcome = unsafe ? await deleter.deleteIgnoringReadErrors(wctx, ctx.info.name) : await deleter.delete(wctx, ctx.info.name, pre);
  noteWrittenObjects(ctx.req, [outcome.object], wctx.dryRun);
  setWarnings(ctx.reply, ctx.warnings);
  const code = outcome.deleted ? 200 : 202;
  if (ctx.def.returnDeletedObject || !outcome.deleted) {
    sendObject(ctx.req, ctx.reply, ctx.def, code, await servedForm(ctx.def, outcome.object));
    return;
  }
  sendPlain(ctx.req, ctx.reply, 200, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: { name: ctx.info.name, group: ctx.def.group || undefined, kind: ctx.def.resource, uid: outcome.object.metadata.uid },
  });
}

/** DELETE of a collection: deletes every match, answers with the list of deleted objects. */
export async function handleDeleteCollection(ctx: HandlerContext, deleter: ResourceDeleteService, lists: Storage, unsafeDeps?: UnsafeDeleteDeps): Promise<void> {
  const { def } = ctx;
  if (!def.verbs.includes('deletecollection')) throw ApiError.methodNotAllowed('the server does not allow this method on the requested resource');
  const { wctx } = writeContext(ctx, 'DeleteOptions');
  const { pre, dryRunInBody } = deleteOptions(ctx, unsafeDeps, true);
  if (dryRunInBody) wctx.dryRun = true;
  const page = await lists.list(listScope(ctx, ctx.query.labelSelector ?? '', ctx.query.fieldSelector ?? '').scope);
  const deleted: KubeObject[] = [];
  for (const item of page.items) {
    try {
      const outcome = await deleter.delete({ ...wctx, namespace: item.key.namespace }, item.key.name, pre);
      deleted.push(outcome.object);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
  }
  noteWrittenObjects(ctx.req, deleted, wctx.dryRun);
  setWarnings(ctx.reply, ctx.warnings);
  sendPlain(ctx.req, ctx.reply, 200, { kind: def.listKind, apiVersion: groupVersion(def), metadata: {}, items: await servedForms(def, deleted, true) });
}
