import { validateSecret, validateSecretUpdate } from './secret.validation.js';
import type { KubeObject } from '@plinth/apimachinery';
import { isPlainObject } from '@plinth/apimachinery';
import type { ResourceStrategy } from '../../registry/resource-definition.js';

/**
 * Merges `stringData` into `data` (base64-encoding each value; stringData
 * wins on a shared key) and drops `stringData`, as the upstream Secret
 * conversion does. Mutates `obj`.
 */
function mergeStringData(obj: KubeObject): void {
  const stringData = obj.stringData;
  delete obj.stringData;
  if (!isPlainObject(stringData)) return;
  const data: Record<string, unknown> = isPlainObject(obj.data) ? { ...obj.data } : {};
  for (const [k, v] of Object.entries(stringData)) {
    if (typeof v === 'string') data[k] = Buffer.from(v, 'utf8').toString('base64');
  }
  obj.data = data;
}

/** Secret: `type` defaults to Opaque; stringData is write-only and merged into data. */
export const secretStrategy: ResourceStrategy = {
  prepareForCreate: (obj: KubeObject) => {
    if (obj.type === undefined || obj.type === '') obj.type = 'Opaque';
  },
  prepareForUpdate: (obj: KubeObject, old: KubeObject) => {
    if (obj.type === undefined || obj.type === '') obj.type = old.type;
  },
  canonicalize: mergeStringData,
  validate: (obj: KubeObject) => validateSecret(obj),
  validateUpdate: (obj: KubeObject, old: KubeObject) => validateSecretUpdate(obj, old),
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};
