import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import type { ResourceStrategy } from '../../registry/resource-definition.js';
import { RBAC_API_GROUP, validateBinding, validateBindingUpdate, validateClusterRole, validateClusterRoleUpdate, validateRole } from './rbac.validation.js';

/** rbac/v1 defaulting of a binding: roleRef.apiGroup and each User/Group subject's apiGroup default to the RBAC group; empty optional subject fields are dropped. Mutates `obj`. */
export function defaultBinding(obj: KubeObject): void {
  if (isPlainObject(obj.roleRef) && !obj.roleRef.apiGroup) obj.roleRef.apiGroup = RBAC_API_GROUP;
  if (!Array.isArray(obj.subjects)) return;
  for (const s of obj.subjects) {
    if (!isPlainObject(s)) continue;
    // Empty optional strings are omitted, as Go's encoder drops them (omitempty).
    if (s.namespace === '') delete s.namespace;
    if (s.apiGroup) continue;
    if (s.kind === 'User' || s.kind === 'Group') s.apiGroup = RBAC_API_GROUP;
    else delete s.apiGroup;
  }
}

const noop = () => undefined;

/** Role: rules validated as namespaced rules; create-on-update and unconditional updates allowed, as upstream. */
export const roleStrategy: ResourceStrategy = {
  prepareForCreate: noop,
  prepareForUpdate: noop,
  validate: (obj) => validateRole(obj),
  validateUpdate: (obj) => validateRole(obj),
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
};

/** ClusterRole: rules and aggregationRule validated; create-on-update and unconditional updates allowed, as upstream. */
export const clusterRoleStrategy: ResourceStrategy = {
  prepareForCreate: noop,
  prepareForUpdate: noop,
  validate: (obj) => validateClusterRole(obj),
  validateUpdate: (obj, old) => validateClusterRoleUpdate(obj, old),
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
};

function bindingStrategy(namespaced: boolean): ResourceStrategy {
  return {
    prepareForCreate: defaultBinding,
    prepareForUpdate: defaultBinding,
    validate: (obj) => validateBinding(obj, namespaced),
    validateUpdate: (obj, old) => validateBindingUpdate(obj, old, namespaced),
    allowCreateOnUpdate: true,
    allowUnconditionalUpdate: true,
  };
}

/** RoleBinding: defaults, validation, roleRef immutable. */
export const roleBindingStrategy: ResourceStrategy = bindingStrategy(true);

/** ClusterRoleBinding: defaults, validation (roleRef must be a ClusterRole), roleRef immutable. */
export const clusterRoleBindingStrategy: ResourceStrategy = bindingStrategy(false);
