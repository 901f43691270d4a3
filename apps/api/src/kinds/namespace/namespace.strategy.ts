import {
  validateNamespace,
  validateNamespaceFinalizeUpdate,
  validateNamespaceStatusUpdate,
  validateNamespaceUpdate,
} from './namespace.validation.js';
import type { KubeObject } from '@plinth/apimachinery';
import { isPlainObject } from '@plinth/apimachinery';
import type { ResourceStrategy } from '../../registry/resource-definition.js';

/** The finalizer the namespace controller removes (through `finalize`) once a deleting namespace is empty. */
export const NAMESPACE_FINALIZER = 'kubernetes';

/** A namespace's spec.finalizers (empty when absent or malformed). Does not mutate `obj`. */
export function namespaceFinalizers(obj: KubeObject): string[] {
  const list = isPlainObject(obj.spec) ? obj.spec.finalizers : undefined;
  return Array.isArray(list) ? list.filter((f): f is string => typeof f === 'string') : [];
}

/**
 * Namespace: status is server-owned (phase Active on create, kept on
 * update of the main resource); on create, spec.finalizers always holds
 * "kubernetes" (appended to the client's own, as upstream). A deleting
 * namespace is removed only once spec.finalizers is empty too.
 */
export const namespaceStrategy: ResourceStrategy = {
  prepareForCreate: (obj: KubeObject) => {
    obj.status = { phase: 'Active' };
    const spec = isPlainObject(obj.spec) ? obj.spec : {};
    const finalizers = Array.isArray(spec.finalizers) ? spec.finalizers : [];
    if (!finalizers.includes(NAMESPACE_FINALIZER)) spec.finalizers = [...finalizers, NAMESPACE_FINALIZER];
    obj.spec = spec;
  },
  finalized: (obj: KubeObject) => namespaceFinalizers(obj).length === 0,
  prepareForUpdate: (obj: KubeObject, old: KubeObject) => {
    obj.status = old.status;
    obj.spec = old.spec;
  },
  validate: (obj: KubeObject) => validateNamespace(obj),
  validateUpdate: (obj: KubeObject, old: KubeObject) => validateNamespaceUpdate(obj, old),
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};

/** Writes to namespaces/status: only status may change. Mutates `obj`. */
export const namespaceStatusStrategy: ResourceStrategy = {
  ...namespaceStrategy,
  prepareForCreate: () => undefined,
  prepareForUpdate: (obj: KubeObject, old: KubeObject) => {
    obj.spec = old.spec;
  },
  validateUpdate: (obj: KubeObject, old: KubeObject) => validateNamespaceStatusUpdate(obj, old),
};

/** Writes to namespaces/finalize: only spec.finalizers may change. Mutates `obj`. */
export const namespaceFinalizeStrategy: ResourceStrategy = {
  ...namespaceStrategy,
  prepareForCreate: () => undefined,
  prepareForUpdate: (obj: KubeObject, old: KubeObject) => {
    const finalizers = isPlainObject(obj.spec) ? obj.spec.finalizers : undefined;
    obj.status = old.status;
    obj.metadata = { ...old.metadata, resourceVersion: obj.metadata.resourceVersion };
    obj.spec = { ...(isPlainObject(old.spec) ? old.spec : {}), finalizers };
  },
  validateUpdate: (obj: KubeObject, old: KubeObject) => validateNamespaceFinalizeUpdate(obj, old),
};
