import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import { STANDARD_VERBS, type ResourceDefinition } from '../../registry/resource-definition.js';
import { ageCell } from '../../table/human-duration.js';
import { ageColumn, nameColumn } from '../../table/standard-columns.js';
import { FEATURE_GATE_STORAGE_RESOURCE, FEATURES_GROUP, FEATURES_VERSION, featureGateSchema } from './feature-gate.schema.js';
import { featureGateStrategy } from './feature-gate.strategy.js';

function specField(o: KubeObject, key: string): unknown {
  return isPlainObject(o.spec) ? o.spec[key] : undefined;
}

/** Whether a stored FeatureGate is on: `enabled`, else `default`. */
export function gateEnabled(o: KubeObject): boolean {
  const enabled = specField(o, 'enabled');
  return typeof enabled === 'boolean' ? enabled : specField(o, 'default') === true;
}

/**
 * features.plinth.dev/v1alpha1 FeatureGate: cluster-scoped, in every
 * tenant; the gates a tenant's CRD schemas may name (see
 * docs/feature-gates.md). Every replica caches them (a write is answered
 * once this replica's strategies see it).
 */
export const featureGateResource: ResourceDefinition = {
  group: FEATURES_GROUP,
  version: FEATURES_VERSION,
  resource: 'featuregates',
  singular: 'featuregate',
  kind: 'FeatureGate',
  listKind: 'FeatureGateList',
  namespaced: false,
  shortNames: [],
  categories: [],
  verbs: STANDARD_VERBS,
  subresources: [],
  schema: featureGateSchema,
  strategy: featureGateStrategy,
  table: {
    columns: [
      nameColumn,
      { name: 'Gate', type: 'string', format: '', description: 'The name CRD schemas use.', priority: 0 },
      { name: 'Stage', type: 'string', format: '', description: 'Alpha, Beta, GA or Deprecated.', priority: 0 },
      { name: 'Enabled', type: 'boolean', format: '', description: 'Whether the gate is on in this tenant.', priority: 0 },
      ageColumn,
    ],
    cells: (o: KubeObject, now: Date) => [o.metadata.name, specField(o, 'name') ?? '', specField(o, 'stage') ?? '', gateEnabled(o), ageCell(o.metadata.creationTimestamp, now)],
  },
  selectableFields: {},
  storageResource: FEATURE_GATE_STORAGE_RESOURCE,
  cachedOnEveryReplica: true,
  tracksGeneration: true,
  returnDeletedObject: false,
  nameValidation: 'subdomain',
};
