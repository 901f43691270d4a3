import type { KindRest } from '../handlers/kind-rest.js';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import { handleScaleGet, handleScalePatch, handleScaleUpdate } from './scale.handler.js';

/** The `scale` subresource of custom resources whose CRD declares one (autoscaling/v1 Scale read from and written to the declared paths). */
export function customResourceScaleRest(store: ResourceStoreService): KindRest {
  return {
    serves: (def) => !!def.custom?.scale,
    subresources: { scale: { get: (ctx) => handleScaleGet(ctx, store), update: (ctx) => handleScaleUpdate(ctx, store), patch: (ctx) => handleScalePatch(ctx, store) } },
  };
}
