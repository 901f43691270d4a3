import type { StructuralSchema } from '@plinth/apimachinery';
import { objectMetaProperty, typeMetaProperties } from '../../schema/object-meta.schema.js';

/** The API group of the per-tenant FeatureGate kind. */
export const FEATURES_GROUP = 'features.plinth.dev';
/** Its only version (not switched by runtime configuration: CRD schemas of the tenant depend on it). */
export const FEATURES_VERSION = 'v1alpha1';
/** The storage resource of FeatureGates. */
export const FEATURE_GATE_STORAGE_RESOURCE = `${FEATURES_GROUP}/featuregates`;

/** features.plinth.dev/v1alpha1 FeatureGateSpec. */
const featureGateSpecSchema: StructuralSchema = {
  type: 'object',
  description: 'FeatureGateSpec defines one feature gate of the tenant, for the x-plinth-feature-gate extensions of its CustomResourceDefinitions.',
  required: ['name', 'stage'],
  properties: {
    name: { type: 'string', description: 'Name of the gate as CRD schemas name it, UpperCamelCase (e.g. "Frobber2D"). metadata.name must be this name in lower case.' },
    stage: { type: 'string', description: 'Stage of the feature: Alpha, Beta, GA or Deprecated.', enum: ['Alpha', 'Beta', 'GA', 'Deprecated'] },
    default: { type: 'boolean', description: 'Default tells whether the gate is on when enabled is not set. Defaulted from the stage: false for Alpha and Deprecated, true for Beta and GA.' },
    enabled: { type: 'boolean', description: 'Enabled switches the gate in this tenant; unset means the default. A GA gate is locked to its default.' },
  },
};

/** features.plinth.dev/v1alpha1 FeatureGate. */
export const featureGateSchema: StructuralSchema = {
  type: 'object',
  description: 'FeatureGate is a feature gate defined by the tenant: CustomResourceDefinitions of the tenant may name it in x-plinth-feature-gate and x-plinth-feature-gated-values.',
  properties: {
    ...typeMetaProperties(),
    metadata: objectMetaProperty(),
    spec: featureGateSpecSchema,
  },
};
