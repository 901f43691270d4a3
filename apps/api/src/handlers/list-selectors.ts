import type { KeyFieldRequirement } from '@plinth/storage';
import {
  type FieldRequirement,
  type LabelSelector,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
  type Requirement,
  SelectorError,
} from '@plinth/apimachinery';
import { ApiError } from '@plinth/apimachinery';
import type { KubeObject } from '@plinth/apimachinery';
import type { ResourceDefinition } from '../registry/resource-definition.js';

/** Selectors of a list or watch, split into what SQL can do and a predicate for the rest. */
export interface CompiledSelectors {
  labelRequirements: Requirement[];
  keyFieldRequirements: KeyFieldRequirement[];
  /** Undefined when SQL does all the filtering. */
  filter?: (obj: KubeObject) => boolean;
  /** Matches an object against every selector (for watch events). */
  matches: (obj: KubeObject) => boolean;
  /** True when any selector is present (then remainingItemCount is omitted). */
  any: boolean;
}

const SQL_OPERATORS = new Set(['In', 'NotIn', 'Equals', 'DoubleEquals', 'NotEquals', 'Exists', 'DoesNotExist']);

/** The accessor of a selectable field of `def`; only its own entries (a client's `__proto__` or `constructor` is no field). */
function selectableField(def: ResourceDefinition, field: string): ResourceDefinition['selectableFields'][string] | undefined {
  return Object.hasOwn(def.selectableFields, field) ? def.selectableFields[field] : undefined;
}

/** The value of a selectable field of `obj`, or undefined when `def` does not support the field. */
function fieldValue(def: ResourceDefinition, obj: KubeObject, field: string): string | undefined {
  if (field === 'metadata.name') return obj.metadata.name ?? '';
  if (field === 'metadata.namespace') return def.namespaced ? (obj.metadata.namespace ?? '') : '';
  const get = selectableField(def, field);
  return get ? get(obj) : undefined;
}

/**
 * Parses `labelSelector` and `fieldSelector` for `def`. Throws ApiError 400
 * with upstream's messages for syntax errors and unsupported fields.
 */
export function compileSelectors(def: ResourceDefinition, labelSelector: string, fieldSelector: string): CompiledSelectors {
  let labels: LabelSelector;
  let fields: FieldRequirement[];
  try {
    labels = parseLabelSelector(labelSelector);
    fields = parseFieldSelector(fieldSelector).requirements;
  } catch (err) {
    if (err instanceof SelectorError) throw ApiError.badRequest(err.message);
    throw err;
  }
  for (const f of fields) {
    if (f.field !== 'metadata.name' && f.field !== 'metadata.namespace' && !selectableField(def, f.field)) {
      throw ApiError.badRequest(`field label not supported: ${f.field}`);
    }
  }
  const sqlLabels = labels.requirements.filter((r) => SQL_OPERATORS.has(r.operator));
  const jsLabels: LabelSelector = { requirements: labels.requirements.filter((r) => !SQL_OPERATORS.has(r.operator)) };
  const keyFields = fields.filter((f) => f.field === 'metadata.name' || (f.field === 'metadata.namespace' && def.namespaced));
  const otherFields = fields.filter((f) => !keyFields.includes(f));
  const fieldMatch = (obj: KubeObject, reqs: FieldRequirement[]) =>
    reqs.every((f) => (fieldValue(def, obj, f.field) === f.value) === (f.operator === '='));
  const needsFilter = jsLabels.requirements.length > 0 || otherFields.length > 0;
  return {
    labelRequirements: sqlLabels,
    keyFieldRequirements: keyFields as KeyFieldRequirement[],
    filter: needsFilter ? (o) => matchesLabels(jsLabels, o.metadata.labels) && fieldMatch(o, otherFields) : undefined,
    matches: (o) => matchesLabels(labels, o.metadata.labels) && fieldMatch(o, fields),
    any: labels.requirements.length > 0 || fields.length > 0,
  };
}
