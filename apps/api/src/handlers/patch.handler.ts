import {
  DecodeError,
  makeStorable,
  parseJsonStrict,
  ApiError,
  applyJsonPatch,
  applyMergePatch,
  applyStrategicMergePatch,
  fieldErrors,
  type KubeObject,
} from '@plinth/apimachinery';
import { applyFieldValidation, checkTypeMeta, mediaType } from '../http/body-decoder.js';
import { sendObject, setWarnings } from '../http/response-writer.js';
import type { ResourceStrategy } from '../registry/resource-definition.js';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { checkTypes, dropUndeclared } from '../http/decode-object.js';
import type { HandlerContext } from '../http/handler-context.js';
import { writeContext } from './write-handler-support.js';
import { APPLY_PATCH, APPLY_PATCH_CBOR, handleApply } from './apply-patch.handler.js';
import { cborServed } from '../http/cbor-serving.js';
import { parseBool } from '../http/options/query-validation.js';

const JSON_PATCH = 'application/json-patch+json';
const MERGE_PATCH = 'application/merge-patch+json';
const STRATEGIC_PATCH = 'application/strategic-merge-patch+json';

/**
 * Patch types served for a kind: strategic merge only for built-in kinds
 * with a typed schema; server-side apply for all, in CBOR too when `cbor`
 * (the CBORServingAndStorage gate).
 */
export function patchTypesFor(builtin: boolean, cbor = false): string[] {
  const types = builtin ? [JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH, APPLY_PATCH] : [JSON_PATCH, MERGE_PATCH, APPLY_PATCH];
  return cbor ? [...types, APPLY_PATCH_CBOR] : types;
}

function unsupported(accepted: string[]): ApiError {
  return ApiError.unsupportedMediaType(
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  );
}

/**
 * PATCH of one object (or subresource, with `strategy`): JSON patch, merge
 * patch or strategic merge patch applied to the current object inside the
 * guaranteed-update loop; a resourceVersion the patch sets is a
 * precondition. Server-side apply is handled by handleApply.
 */
export async function handlePatch(ctx: HandlerContext, store: ResourceStoreService, builtin: boolean, strategy?: ResourceStrategy): Promise<void> {
  const accepted = patchTypesFor(builtin, cborServed(ctx.req));
  const mt = mediaType(ctx.req.headers['content-type']);
  // Upstream's text for custom resources names apply-patch+yaml too (kubectl users see it on strategic merge patches).
  if (!accepted.includes(mt)) throw unsupported(accepted);
  if (mt === APPLY_PATCH || mt === APPLY_PATCH_CBOR) return handleApply(ctx, store, strategy);
  if (parseBool(ctx.query.force) !== undefined) {
    throw ApiError.invalid({ group: 'meta.k8s.io', kind: 'PatchOptions', name: '' }, [fieldErrors.forbidden('force', 'may not be specified for non-apply patch')]);
  }
  // Upstream hands admission UpdateOptions for a patch (patchToUpdateOptions).
  const { wctx, opts } = writeContext(ctx, 'UpdateOptions');
  const text = ctx.body?.toString('utf8') ?? '';
  let patch: unknown;
  let duplicates: string[] = [];
  try {
    ({ value: patch, duplicates } = parseJsonStrict(text));
    patch = makeStorable(patch);
  } catch (err) {
    if (err instanceof DecodeError) throw ApiError.badRequest(err.message);
    throw err;
  }
  const { def } = ctx;
  let attemptWarnings: string[] = [];
  const transform = (current: KubeObject): KubeObject => {
    attemptWarnings = [];
    let patched: unknown;
    // A custom resource is patched as the requested version shows it (stored in any version).
    const base = def.custom ? def.custom.present(current) : current;
    if (mt === JSON_PATCH) patched = applyJsonPatch(base, patch, { fieldValidation: opts.fieldValidation });
    else if (mt === MERGE_PATCH) patched = applyMergePatch(base, patch);
    else patched = applyStrategicMergePatch(base, patch, def.schema);
    const obj = checkTypeMeta(patched, def);
    if (def.custom) {
      def.custom.decode(obj, { duplicates, yaml: false }, opts.fieldValidation, attemptWarnings);
      return obj;
    }
    checkTypes(obj, def);
    applyFieldValidation(obj, { duplicates, yaml: false }, def.schema, opts.fieldValidation, attemptWarnings, (o) => dropUndeclared(o, def.schema));
    return obj;
  };
  const { object } = await store.update(wctx, ctx.info.name, transform, strategy);
  ctx.warnings.push(...attemptWarnings);
  setWarnings(ctx.reply, ctx.warnings);
  sendObject(ctx.req, ctx.reply, def, 200, object);
}
