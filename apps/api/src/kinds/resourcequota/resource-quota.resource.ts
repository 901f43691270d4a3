import { type FieldError, fieldErrors, isPlainObject, type KubeObject, Quantity, type StructuralSchema } from '@plinth/apimachinery';
import { STANDARD_VERBS, type ResourceDefinition, type ResourceStrategy } from '../../registry/resource-definition.js';
import { objectMetaProperty, typeMetaProperties } from '../../schema/object-meta.schema.js';
import { ageCell } from '../../table/human-duration.js';
import { ageColumn, nameColumn } from '../../table/standard-columns.js';

/** A map of resource name to quantity (v1.ResourceList). */
const resourceList = (description: string): StructuralSchema => ({
  type: 'object',
  description,
  additionalProperties: { 'x-kubernetes-int-or-string': true, description: 'A quantity (e.g. 10, 1k).' } as StructuralSchema,
});

/** v1 ResourceQuota's schema (spec.hard, scopes; status.hard and status.used). */
export const resourceQuotaSchema: StructuralSchema = {
  type: 'object',
  description: 'ResourceQuota sets aggregate quota restrictions enforced per namespace',
  properties: {
    ...typeMetaProperties(),
    metadata: objectMetaProperty(),
    spec: {
      type: 'object',
      description: 'Spec defines the desired quota. https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status',
      properties: {
        hard: resourceList('hard is the set of desired hard limits for each named resource. More info: https://kubernetes.io/docs/concepts/policy/resource-quotas/'),
        scopes: { type: 'array', description: 'A collection of filters that must match each object tracked by a quota. If not specified, the quota matches all objects.', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' },
        scopeSelector: {
          type: 'object',
          description: 'scopeSelector is also a collection of filters like scopes that must match each object tracked by a quota but expressed using ScopeSelectorOperator in combination with possible values. For a resource to match, both scopes AND scopeSelector (if specified in spec), must be matched.',
          properties: {
            matchExpressions: {
              type: 'array',
              description: 'A list of scope selector requirements by scope of the resources.',
              items: {
                type: 'object',
                properties: {
                  scopeName: { type: 'string', description: 'The name of the scope that the selector applies to.' },
                  operator: { type: 'string', description: "Represents a scope's relationship to a set of values." },
                  values: { type: 'array', items: { type: 'string' }, description: 'An array of string values.' },
                },
              },
              'x-kubernetes-list-type': 'atomic',
            },
          },
        },
      },
    },
    status: {
      type: 'object',
      description: 'Status defines the actual enforced quota and its current usage. https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status',
      properties: {
        hard: resourceList('Hard is the set of enforced hard limits for each named resource. More info: https://kubernetes.io/docs/concepts/policy/resource-quotas/'),
        used: resourceList('Used is the current observed total usage of the resource in the namespace.'),
      },
    },
  },
};

/** Validates spec.hard (quantities, not negative) and refuses scopes and scope selectors, which only select pods, which Plinth does not serve. Pure. */
export function validateResourceQuota(obj: KubeObject): FieldError[] {
  const spec = isPlainObject(obj.spec) ? obj.spec : {};
  const errs: FieldError[] = [];
  for (const [name, v] of Object.entries(isPlainObject(spec.hard) ? spec.hard : {})) {
    const path = `spec.hard[${name}]`;
    try {
      const q = Quantity.parse(String(v));
      if (q.num < 0n) errs.push(fieldErrors.invalid(path, v, 'must be greater than or equal to 0'));
      else if (name.startsWith('count/') && q.den !== 1n) errs.push(fieldErrors.invalid(path, v, 'must be an integer'));
    } catch (err) {
      errs.push(fieldErrors.invalid(path, v, (err as Error).message));
    }
  }
  if (Array.isArray(spec.scopes) && spec.scopes.length > 0) errs.push(fieldErrors.notSupported('spec.scopes', spec.scopes[0], []));
  const sel = isPlainObject(spec.scopeSelector) ? spec.scopeSelector : {};
  if (Array.isArray(sel.matchExpressions) && sel.matchExpressions.length > 0) errs.push(fieldErrors.notSupported('spec.scopeSelector.matchExpressions', sel.matchExpressions[0], []));
  return errs;
}

/** The status is the quota controller's: clients' values are dropped, updates keep the stored one. */
const resourceQuotaStrategy: ResourceStrategy = {
  prepareForCreate: (obj) => {
    delete obj.status;
  },
  prepareForUpdate: (obj, old) => {
    if (old.status === undefined) delete obj.status;
    else obj.status = old.status;
  },
  validate: validateResourceQuota,
  validateUpdate: (obj) => validateResourceQuota(obj),
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};

/** `name: used/hard, …` over the hard names selected by `pick`, as kubectl's REQUEST and LIMIT columns. */
function usage(o: KubeObject, pick: (name: string) => boolean): string {
  const status = isPlainObject(o.status) ? o.status : {};
  const hard = isPlainObject(status.hard) ? status.hard : {};
  const used = isPlainObject(status.used) ? status.used : {};
  return Object.keys(hard)
    .filter(pick)
    .sort()
    .map((k) => `${k}: ${String(used[k] ?? 0)}/${String(hard[k])}`)
    .join(', ');
}

/** v1 ResourceQuota: object-count quotas per namespace, enforced exactly at write time. */
export const resourceQuotaResource: ResourceDefinition = {
  group: '',
  version: 'v1',
  resource: 'resourcequotas',
  singular: 'resourcequota',
  kind: 'ResourceQuota',
  listKind: 'ResourceQuotaList',
  namespaced: true,
  shortNames: ['quota'],
  categories: [],
  verbs: STANDARD_VERBS,
  subresources: [],
  schema: resourceQuotaSchema,
  strategy: resourceQuotaStrategy,
  table: {
    columns: [
      nameColumn,
      ageColumn,
      { name: 'Request', type: 'string', format: '', description: 'Request', priority: 0 },
      { name: 'Limit', type: 'string', format: '', description: 'Limit', priority: 0 },
    ],
    cells: (o: KubeObject, now: Date) => [o.metadata.name, ageCell(o.metadata.creationTimestamp, now), usage(o, (k) => !k.startsWith('limits.')), usage(o, (k) => k.startsWith('limits.'))],
  },
  selectableFields: {},
  storageResource: 'resourcequotas',
  tracksGeneration: false,
  returnDeletedObject: false,
  nameValidation: 'subdomain',
};
