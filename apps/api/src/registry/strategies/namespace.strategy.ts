import {
  validateNamespace,
  validateNamespaceFinalizeUpdate,
  validateNamespaceStatusUpdate,
  validateNamespaceUpdate,
} from '../../validation/namespace.validation.js';
import type { KubeObject } from '@plinth/apimachinery';
import { isPlainObject } from '@plinth/apimachinery';
import type { ResourceStrategy } from '../resource-definition.js';

/**
 * Namespace: status is server-owned (phase Active on create, kept on
 * update of the main resource); spec.finalizers defaults to ["kubernetes"].
 */
export const namespaceStrategy: ResourceStrategy = {
  prepareForCreate: (obj: KubeObject) => {
    obj.status = { phase: 'Active' };
    const spec = isPlainObject(obj.spec) ? obj.spec : {};
    if (!Array.isArray(spec.finalizers) || spec.finalizers.length === 0) spec.finalizers = ['kubernetes'];
    obj.spec = spec;
  },
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
