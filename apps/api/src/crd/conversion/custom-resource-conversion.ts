import { ApiError, isPlainObject, type KubeObject } from '@plinth/apimachinery';
import type { RemoteConversion, StorageConversion } from '../../registry/resource-definition.js';
import type { CrdObject } from '../../kinds/customresourcedefinition/crd-types.js';
import type { CustomResourceSchema } from '../custom-resource-schema.js';
import { type ConversionWebhookCaller, type ConversionWebhookSpec } from './conversion-webhook.js';
import { ConversionError } from './conversion-review.js';

/**
 * How one served version of a CRD converts to and from its storage
 * version: strategy `None` rewrites `apiVersion` (pure, as upstream's
 * nopConverter); strategy `Webhook` calls the CRD's conversion webhook for
 * the objects not yet in the target version and prunes the result to the
 * target's schema (upstream's schemaCoercingConverter). Objects are always
 * stored in the storage version.
 */

/** What the conversion of a tenant's CRDs calls out with. */
export interface CrdConversionContext {
  tenant: string;
  webhooks: ConversionWebhookCaller;
}

/** A copy of `obj` with `apiVersion` set (the same object when it already is). */
function withApiVersion(obj: KubeObject, apiVersion: string): KubeObject {
  return obj.apiVersion === apiVersion ? obj : { ...obj, apiVersion };
}

/** The CRD's conversion webhook, or undefined for strategy None (or a CRD without a usable webhook). */
export function conversionWebhookOf(crd: CrdObject): ConversionWebhookSpec | undefined {
  const conv = crd.spec.conversion;
  if (conv?.strategy !== 'Webhook' || !isPlainObject(conv.webhook)) return undefined;
  const w = conv.webhook as { clientConfig?: ConversionWebhookSpec['clientConfig']; conversionReviewVersions?: string[] };
  return { crd: crd.metadata.name ?? '', clientConfig: isPlainObject(w.clientConfig) ? w.clientConfig : {}, conversionReviewVersions: Array.isArray(w.conversionReviewVersions) ? w.conversionReviewVersions : [] };
}

/** Strategy None: stored under the storage version's apiVersion, read under the served one. */
export function apiVersionConversion(servedAPIVersion: string, storageAPIVersion: string): StorageConversion {
  return {
    toStored: (obj) => withApiVersion(obj, storageAPIVersion),
    fromStored: (obj) => withApiVersion(obj, servedAPIVersion),
  };
}

/** What {@link webhookConversion} needs about the version it serves. */
export interface WebhookConversionTarget {
  hook: ConversionWebhookSpec;
  kind: string;
  listKind: string;
  servedAPIVersion: string;
  storageAPIVersion: string;
  /** The storage version's schema: converted objects are pruned to it before they are stored. */
  storageSchema: CustomResourceSchema;
}

function internal(err: unknown): never {
  if (err instanceof ConversionError) throw ApiError.internal(err.message);
  throw err;
}

/** Strategy Webhook for one served version; see the file comment. */
export function webhookConversion(t: WebhookConversionTarget, ctx: CrdConversionContext): RemoteConversion {
  const convert = async (objs: KubeObject[], desired: string, list: boolean): Promise<KubeObject[]> => {
    const pending = objs.filter((o) => o.apiVersion !== desired);
    if (pending.length === 0) return objs;
    const gvk = `${pending[0].apiVersion}, Kind=${list ? t.listKind : t.kind}`;
    const converted = await ctx.webhooks.convert({ tenant: ctx.tenant, hook: t.hook, objects: pending, desiredAPIVersion: desired, gvk, list }).catch(internal);
    let next = 0;
    return objs.map((o) => (o.apiVersion === desired ? o : converted[next++]));
  };
  const toStorage = async (objs: KubeObject[], list: boolean): Promise<KubeObject[]> => {
    const stored = await convert(objs, t.storageAPIVersion, list);
    return stored.map((o, i) => {
      if (o !== objs[i]) t.storageSchema.prune(o);
      return o;
    });
  };
  return {
    fromStored: (objs, list = false) => convert(objs, t.servedAPIVersion, list),
    toStored: async (obj) => (await toStorage([obj], false))[0],
    toStoredBatch: (objs) => toStorage(objs, true),
  };
}
