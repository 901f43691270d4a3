import { DecodeError } from '@plinth/apimachinery';
import { parseJsonStrict } from '@plinth/apimachinery';
import { ApiError } from '@plinth/apimachinery';
import { fieldErrors } from '@plinth/apimachinery';
import type { HandlerContext } from '../http/handler-context.js';
import { requestNamespace } from '../http/handler-context.js';
import { writeContext } from '../handlers/write-handler-support.js';
import { mediaType, parseBody } from '../http/body-decoder.js';
import { cborServed } from '../http/cbor-serving.js';
import { sendPlain, setWarnings } from '../http/response-writer.js';
import { applyJsonPatch } from '@plinth/apimachinery';
import { applyMergePatch } from '@plinth/apimachinery';
import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { servedForm } from '../registry/resource-definition.js';
import { readPath } from './custom-resource.strategy.js';

/**
 * The `/scale` subresource of custom resources: an autoscaling/v1 Scale
 * view of the object through the CRD's specReplicasPath,
 * statusReplicasPath and labelSelectorPath (upstream
 * registry/customresource ScaleREST). `kubectl scale` PATCHes it.
 */

type ScalePaths = NonNullable<NonNullable<HandlerContext['def']['custom']>['scale']>;

function pathsOf(ctx: HandlerContext): ScalePaths {
  const scale = ctx.def.custom?.scale;
  if (!scale) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
  return scale;
}

/** The Scale view of `obj`. */
export function scaleOf(obj: KubeObject, paths: ScalePaths): Record<string, unknown> {
  const spec = readPath(obj, paths.specReplicasPath);
  const status = readPath(obj, paths.statusReplicasPath);
  const selector = paths.labelSelectorPath ? readPath(obj, paths.labelSelectorPath) : undefined;
  const m = obj.metadata;
  const metadata: Record<string, unknown> = { name: m.name, uid: m.uid, resourceVersion: m.resourceVersion, creationTimestamp: m.creationTimestamp };
  if (m.namespace) metadata.namespace = m.namespace;
  const st: Record<string, unknown> = { replicas: typeof status === 'number' ? status : 0 };
  if (typeof selector === 'string' && selector) st.selector = selector;
  return { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata, spec: { replicas: typeof spec === 'number' ? spec : 0 }, status: st };
}

function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const segs = path.replace(/^\./, '').split('.');
  let cur = obj;
  for (const s of segs.slice(0, -1)) {
    if (!isPlainObject(cur[s])) cur[s] = {};
    cur = cur[s] as Record<string, unknown>;
  }
  cur[segs[segs.length - 1]] = value;
}

function checkScale(ctx: HandlerContext, scale: unknown): { replicas: number; resourceVersion?: string } {
  if (!isPlainObject(scale)) throw ApiError.badRequest('the body of the request must be a JSON object describing a Scale');
  const spec = isPlainObject(scale.spec) ? scale.spec : {};
  const replicas = spec.replicas ?? 0;
  const meta = isPlainObject(scale.metadata) ? scale.metadata : {};
  if (typeof replicas !== 'number' || !Number.isInteger(replicas)) throw ApiError.badRequest(`Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal ${typeof replicas} into Go struct field ScaleSpec.spec.replicas of type int32`);
  if (replicas < 0) {
    throw ApiError.invalid({ group: 'autoscaling', kind: 'Scale', name: ctx.info.name }, [fieldErrors.invalid('spec.replicas', replicas, 'must be greater than or equal to 0')]);
  }
  return { replicas, resourceVersion: typeof meta.resourceVersion === 'string' && meta.resourceVersion ? meta.resourceVersion : undefined };
}

/** GET …/scale. */
export async function handleScaleGet(ctx: HandlerContext, store: ResourceStoreService): Promise<void> {
  const paths = pathsOf(ctx);
  const found = await store.get(ctx.info.tenant, ctx.def, requestNamespace(ctx), ctx.info.name);
  sendPlain(ctx.req, ctx.reply, 200, scaleOf(await servedForm(ctx.def, found.body as KubeObject), paths));
}

async function writeScale(ctx: HandlerContext, store: ResourceStoreService, desired: (current: Record<string, unknown>) => unknown): Promise<void> {
  const paths = pathsOf(ctx);
  const { wctx } = writeContext(ctx, ctx.req.method === 'PATCH' ? 'PatchOptions' : 'UpdateOptions');
  const { object } = await store.update(wctx, ctx.info.name, (current) => {
    const { replicas, resourceVersion } = checkScale(ctx, desired(scaleOf(current, paths)));
    if (resourceVersion && resourceVersion !== current.metadata.resourceVersion) {
      throw ApiError.staleConflict({ group: ctx.def.group, kind: ctx.def.resource, name: ctx.info.name });
    }
    setPath(current, paths.specReplicasPath, replicas);
    return current;
  });
  setWarnings(ctx.reply, ctx.warnings);
  sendPlain(ctx.req, ctx.reply, 200, scaleOf(object, paths));
}

/** PUT …/scale with a Scale body. */
export async function handleScaleUpdate(ctx: HandlerContext, store: ResourceStoreService): Promise<void> {
  const body = parseBody(ctx.body, ctx.req.headers['content-type'], 'Scale', 'v1', 'v1', cborServed(ctx.req)).value;
  if (isPlainObject(body) && body.kind !== undefined && body.kind !== 'Scale') throw ApiError.badRequest(`${String(body.kind)} in version "v1" cannot be handled as a Scale: no kind "${String(body.kind)}" is registered for version "autoscaling/v1"`);
  await writeScale(ctx, store, () => body);
}

/** PATCH …/scale (JSON patch, merge patch; strategic merge patch behaves as merge patch on Scale). */
export async function handleScalePatch(ctx: HandlerContext, store: ResourceStoreService): Promise<void> {
  const mt = mediaType(ctx.req.headers['content-type']);
  const accepted = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json'];
  if (!accepted.includes(mt)) throw ApiError.unsupportedMediaType(`the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`);
  let patch: unknown;
  try {
    patch = parseJsonStrict(ctx.body?.toString('utf8') ?? '').value;
  } catch (err) {
    if (err instanceof DecodeError) throw ApiError.badRequest(err.message);
    throw err;
  }
  await writeScale(ctx, store, (scale) => (mt === 'application/json-patch+json' ? applyJsonPatch(scale, patch) : applyMergePatch(scale, patch)));
}
