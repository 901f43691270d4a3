import { objectMetaProperty, refTo, typeMetaProperties } from './object-meta.schema.js';
import type { StructuralSchema } from '@plinth/apimachinery';

/** OpenAPI definition names of the autoscaling/v1 Scale types. */
export const AUTOSCALING_V1_NAMES = {
  scale: 'io.k8s.api.autoscaling.v1.Scale',
  scaleSpec: 'io.k8s.api.autoscaling.v1.ScaleSpec',
  scaleStatus: 'io.k8s.api.autoscaling.v1.ScaleStatus',
} as const;

const SPEC_AND_STATUS = 'https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status';

/** autoscaling/v1 ScaleSpec. */
export const scaleSpecSchema: StructuralSchema = {
  type: 'object',
  description: 'ScaleSpec describes the attributes of a scale subresource.',
  properties: {
    replicas: { type: 'integer', format: 'int32', description: 'replicas is the desired number of instances for the scaled object.' },
  },
};

/** autoscaling/v1 ScaleStatus. */
export const scaleStatusSchema: StructuralSchema = {
  type: 'object',
  description: 'ScaleStatus represents the current status of a scale subresource.',
  required: ['replicas'],
  properties: {
    replicas: { type: 'integer', format: 'int32', description: 'replicas is the actual number of observed instances of the scaled object.' },
    selector: {
      type: 'string',
      description:
        'selector is the label query over pods that should match the replicas count. This is same as the label selector but in the string format to avoid introspection by clients. The string will be in the same format as the query-param syntax. More info about label selectors: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/',
    },
  },
};

/** autoscaling/v1 Scale, the body of every `/scale` subresource (CRDs included). */
export const scaleSchema: StructuralSchema = {
  type: 'object',
  description: 'Scale represents a scaling request for a resource.',
  properties: {
    ...typeMetaProperties(),
    metadata: objectMetaProperty('Standard object metadata; More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata.'),
    spec: refTo(AUTOSCALING_V1_NAMES.scaleSpec, scaleSpecSchema, `spec defines the behavior of the scale. More info: ${SPEC_AND_STATUS}.`),
    status: refTo(AUTOSCALING_V1_NAMES.scaleStatus, scaleStatusSchema, `status is the current status of the scale. More info: ${SPEC_AND_STATUS}. Read-only.`),
  },
};
