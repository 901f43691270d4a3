import { validateConfigMap, validateConfigMapUpdate } from './configmap.validation.js';
import type { KubeObject } from '@plinth/apimachinery';
import type { ResourceStrategy } from '../../registry/resource-definition.js';

/** ConfigMap: no status, no generation; immutability is enforced by validation. */
export const configMapStrategy: ResourceStrategy = {
  prepareForCreate: () => undefined,
  prepareForUpdate: () => undefined,
  validate: (obj: KubeObject) => validateConfigMap(obj),
  validateUpdate: (obj: KubeObject, old: KubeObject) => validateConfigMapUpdate(obj, old),
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};
