import type { ListQuery } from '@plinth/storage';
import type { KubeObject } from '@plinth/apimachinery';
import { type HandlerContext, requestNamespace } from '../http/handler-context.js';
import { compileSelectors, type CompiledSelectors } from './list-selectors.js';

/** What a list, a watch and a delete of a collection select: the part of a storage query they share. */
export type ListScope = Required<Pick<ListQuery, 'tenant' | 'resource' | 'labelRequirements' | 'fieldRequirements'>> & Pick<ListQuery, 'namespace' | 'filter'>;

/**
 * The objects a collection request selects: the request's tenant and
 * resource, its namespace (all namespaces on a cluster-wide path), and its
 * `labelSelector` and `fieldSelector`, split into what SQL applies and a
 * filter for the rest. Returns the compiled selectors too (a watch matches
 * events with them). Throws ApiError 400 for a bad selector. The one place
 * where a request becomes a list query (list, watch, deletecollection).
 */
export function listScope(ctx: HandlerContext, labelSelector: string, fieldSelector: string): { scope: ListScope; selectors: CompiledSelectors } {
  const { def, info } = ctx;
  const selectors = compileSelectors(def, labelSelector, fieldSelector);
  const filter = selectors.filter;
  return {
    selectors,
    scope: {
      tenant: info.tenant,
      resource: def.storageResource,
      namespace: def.namespaced && info.namespace ? requestNamespace(ctx) : undefined,
      labelRequirements: selectors.labelRequirements,
      fieldRequirements: selectors.keyFieldRequirements,
      filter: filter ? (b) => filter(b as KubeObject) : undefined,
    },
  };
}
