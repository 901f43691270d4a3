import {
  ApplyConflictError,
  applyConfiguration,
  type JsonObject,
  TypedValueError,
  DecodeError,
  decodeCbor,
  makeStorable,
  parseJsonStrict,
  parseYamlStrict,
  ApiError,
  fieldErrors,
  isPlainObject,
  type KubeObject,
} from '@plinth/apimachinery';
import { parseBool } from '../http/options/query-validation.js';
import { sendObject, setWarnings } from '../http/response-writer.js';
import { groupVersion, type ResourceDefinition, type ResourceStrategy } from '../registry/resource-definition.js';
import { fieldManagerScope } from '../resource-store/field-tracking.js';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import type { WriteContext } from '../resource-store/write-context.js';
import { checkTypes } from '../http/decode-object.js';
import type { HandlerContext } from '../http/handler-context.js';
import { writeContext } from './write-handler-support.js';

/** The media type of server-side apply. */
export const APPLY_PATCH = 'application/apply-patch+yaml';

/** Server-side apply with a CBOR configuration (CBORServingAndStorage). */
export const APPLY_PATCH_CBOR = 'application/apply-patch+cbor';

/** Upstream's GroupVersionKind.String(): `group/version, Kind=kind`. */
function gvkString(apiVersion: unknown, kind: unknown): string {
  const av = typeof apiVersion === 'string' ? apiVersion : '';
  const gv = av.includes('/') ? av : `/${av}`;
  return `${gv}, Kind=${typeof kind === 'string' ? kind : ''}`;
}

/**
 * Decodes an apply body (YAML or JSON; CBOR for apply-patch+cbor, where
 * duplicate keys are refused outright). Strict field validation rejects
 * duplicate keys; Warn reports them.
 */
function decodeConfig(ctx: HandlerContext, mode: 'Ignore' | 'Warn' | 'Strict'): JsonObject {
  const cbor = (ctx.req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase() === APPLY_PATCH_CBOR;
  const text = cbor ? '' : (ctx.body?.toString('utf8') ?? '');
  let parsed: { value: unknown; duplicates: string[] };
  try {
    if (cbor) parsed = { value: decodeCbor(ctx.body ?? Buffer.alloc(0)), duplicates: [] };
    // Upstream's apply patcher words every decode error as YAML's, CBOR ones included.
    else parsed = text.trimStart().startsWith('{') ? parseJsonStrict(text) : parseYamlStrict(text);
    parsed.value = makeStorable(parsed.value);
  } catch (err) {
    if (err instanceof DecodeError) throw ApiError.badRequest(`error decoding YAML: ${err.message.replace(/^unable to determine group\/version\/kind: /, '')}`);
    throw err;
  }
  if (!isPlainObject(parsed.value)) throw ApiError.badRequest('error decoding YAML: the body of an apply patch must be an object');
  if (parsed.duplicates.length > 0 && mode !== 'Ignore') {
    const detail = parsed.duplicates.map((d) => `duplicate field "${d}"`).join(', ');
    if (mode === 'Strict') throw ApiError.badRequest(`error strict decoding YAML: ${detail}`);
    ctx.warnings.push(...parsed.duplicates.map((d) => `duplicate field "${d}"`));
  }
  return parsed.value as JsonObject;
}

/** Upstream's checks of an apply configuration against the endpoint: type, managedFields, name and namespace. */
function checkConfig(config: JsonObject, def: ResourceDefinition, ctx: HandlerContext, namespace: string): void {
  if (config.apiVersion !== groupVersion(def) || config.kind !== def.kind) {
    throw ApiError.badRequest(`invalid object type: ${gvkString(config.apiVersion, config.kind)}`);
  }
  const meta = isPlainObject(config.metadata) ? config.metadata : {};
  if (meta.managedFields !== undefined && meta.managedFields !== null) throw ApiError.badRequest('metadata.managedFields must be nil');
  if (def.namespaced && typeof meta.namespace === 'string' && meta.namespace !== '' && meta.namespace !== namespace) {
    throw ApiError.badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  const name = typeof meta.name === 'string' ? meta.name : '';
  if (name !== ctx.info.name) throw ApiError.badRequest(`the name of the object (${name}) does not match the name on the URL (${ctx.info.name})`);
}

/** Runs the field manager, turning its errors into Status errors (409 Conflict with causes, 400 for ill-typed configurations). */
function applyOrThrow(wctx: WriteContext, live: KubeObject | null, config: JsonObject, force: boolean): KubeObject {
  try {
    const out = applyConfiguration(live as JsonObject | null, config, wctx.fieldManager ?? '', force, fieldManagerScope(wctx)) as KubeObject;
    if (!wctx.def.custom) checkTypes(out, wctx.def);
    return out;
  } catch (err) {
    if (err instanceof ApplyConflictError) {
      throw new ApiError(409, 'Conflict', err.message, { causes: err.causes.map((c) => ({ reason: c.type, message: c.message, field: c.field })) });
    }
    if (err instanceof TypedValueError) {
      // Upstream answers this with a 500 (a plain error); bad input gets a 400 here, with upstream's text.
      const meta = isPlainObject(config.metadata) ? config.metadata : {};
      const nn = `${typeof meta.namespace === 'string' ? meta.namespace : ''}/${typeof meta.name === 'string' ? meta.name : ''}`;
      throw ApiError.badRequest(`failed to create typed patch object (${nn}; ${gvkString(config.apiVersion, config.kind)}): ${err.message}`);
    }
    throw err;
  }
}

/**
 * Server-side apply (`PATCH` with application/apply-patch+yaml) of one
 * object or subresource: `fieldManager` is required (422), `force` takes
 * conflicting fields over, and a missing object is created (201) unless
 * the request addresses a subresource.
 */
export async function handleApply(ctx: HandlerContext, store: ResourceStoreService, strategy?: ResourceStrategy): Promise<void> {
  const { wctx, opts } = writeContext(ctx, 'UpdateOptions');
  if (!opts.fieldManager) {
    throw ApiError.invalid({ group: 'meta.k8s.io', kind: 'PatchOptions', name: '' }, [fieldErrors.required('fieldManager', 'is required for apply patch')]);
  }
  wctx.applied = true;
  const force = parseBool(ctx.query.force) === true;
  const { def } = ctx;
  const config = decodeConfig(ctx, opts.fieldValidation);
  checkConfig(config, def, ctx, wctx.namespace);
  const transform = (current: KubeObject): KubeObject => applyOrThrow(wctx, def.custom ? def.custom.present(current) : current, config, force);
  let status = 200;
  let object: KubeObject;
  try {
    ({ object } = await store.update(wctx, ctx.info.name, transform, strategy));
  } catch (err) {
    if (!(err instanceof ApiError && err.code === 404 && err.status.details?.name === ctx.info.name) || ctx.info.subresource) throw err;
    const result = await createOrUpdate(wctx, store, config, force, () => store.update(wctx, ctx.info.name, transform, strategy));
    object = result.object;
    if (result.created) status = 201;
  }
  setWarnings(ctx.reply, ctx.warnings);
  sendObject(ctx.req, ctx.reply, def, status, object);
}

/** Creates the applied object; if someone created it meanwhile, applies to theirs. */
async function createOrUpdate(
  wctx: WriteContext,
  store: ResourceStoreService,
  config: JsonObject,
  force: boolean,
  update: () => Promise<{ object: KubeObject }>,
): Promise<{ object: KubeObject; created: boolean }> {
  try {
    return { object: await store.create(wctx, applyOrThrow(wctx, null, config, force)), created: true };
  } catch (err) {
    if (err instanceof ApiError && err.code === 409 && err.status.reason === 'AlreadyExists') return { object: (await update()).object, created: false };
    throw err;
  }
}
