import { type LabelSelector, labelSelectorFromMetav1 } from '@plinth/apimachinery';
import type { ParamKind, ParamRef } from './policy-types.js';
import { paramKindString } from './policy-types.js';

/** Where params come from: the tenant's objects of the paramKind (newest state). */
export interface ParamStore {
  /** Whether the tenant serves the kind, and its scope; undefined when it does not. */
  scopeOf(tenant: string, kind: ParamKind): { namespaced: boolean } | undefined;
  /** One param object as JSON, or undefined when it does not exist. */
  get(tenant: string, kind: ParamKind, namespace: string, name: string): Promise<Record<string, unknown> | undefined>;
  /** The param objects matching `selector` (in `namespace` for namespaced kinds; '' means all namespaces is never used). */
  list(tenant: string, kind: ParamKind, namespace: string, selector: LabelSelector): Promise<Record<string, unknown>[]>;
}

/** A binding's configuration problem (reported as `failed to configure binding: …` under the policy's failure policy). */
export class ParamError extends Error {}

/**
 * The params a binding evaluates its policy with, as upstream's
 * CollectParams: `[null]` when the policy has no paramKind or the binding
 * no paramRef; otherwise the named object or the selected objects (in the
 * paramRef's namespace, else the request's). An empty result is an error
 * under parameterNotFoundAction Deny and no evaluation under Allow.
 * Throws ParamError for configuration errors.
 */
export async function collectParams(
  store: ParamStore,
  tenant: string,
  kind: ParamKind | undefined,
  ref: ParamRef | null | undefined,
  requestNamespace: string,
): Promise<Array<Record<string, unknown> | null>> {
  if (!kind) return [null];
  const scope = store.scopeOf(tenant, kind);
  if (ref && !scope) throw new ParamError(`paramKind kind \`${paramKindString(kind)}\` not known`);
  if (!ref || !scope) return [null];
  let namespace = '';
  if (scope.namespaced) {
    namespace = ref.namespace || requestNamespace;
    if (!namespace) throw new ParamError('cannot use namespaced paramRef in policy binding that matches cluster-scoped resources');
  } else if (ref.namespace) {
    throw new ParamError('paramRef.namespace must not be provided for a cluster-scoped `paramKind`');
  }
  let params: Record<string, unknown>[];
  if (ref.name) {
    if (ref.selector) throw new ParamError('paramRef.name and paramRef.selector are mutually exclusive');
    const found = await store.get(tenant, kind, namespace, ref.name);
    params = found ? [found] : [];
  } else if (ref.selector) {
    let selector: LabelSelector;
    try {
      selector = labelSelectorFromMetav1(ref.selector);
    } catch (err) {
      throw new ParamError(err instanceof Error ? err.message : String(err));
    }
    params = await store.list(tenant, kind, namespace, selector);
  } else {
    throw new ParamError('one of name or selector must be provided');
  }
  if (params.length === 0 && ref.parameterNotFoundAction === 'Deny') {
    throw new ParamError('no params found for policy binding with `Deny` parameterNotFoundAction');
  }
  return params;
}
