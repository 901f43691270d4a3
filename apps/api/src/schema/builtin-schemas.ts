import { selfSubjectReviewSchema, serviceAccountSchema, tokenRequestSchema, tokenReviewSchema } from './authentication-v1.schema.js';
import { AUTOSCALING_V1_NAMES, scaleSchema, scaleSpecSchema, scaleStatusSchema } from './autoscaling-v1.schema.js';
import {
  CORE_V1_NAMES,
  configMapListSchema,
  configMapSchema,
  namespaceConditionSchema,
  namespaceListSchema,
  namespaceSchema,
  namespaceSpecSchema,
  namespaceStatusSchema,
  secretListSchema,
  secretSchema,
} from './core-v1.schema.js';
import {
  deleteOptionsSchema,
  patchSchema,
  preconditionsSchema,
  rawExtensionSchema,
  statusCauseSchema,
  statusDetailsSchema,
  statusSchema,
  watchEventSchema,
} from './meta-v1.schema.js';
import {
  META_V1_NAMES,
  fieldsV1Schema,
  listMetaSchema,
  managedFieldsEntrySchema,
  objectMetaSchema,
  ownerReferenceSchema,
  timeSchema,
} from './object-meta.schema.js';
import type { StructuralSchema } from '@plinth/apimachinery';

export * from './authentication-v1.schema.js';
export * from './autoscaling-v1.schema.js';
export * from './core-v1.schema.js';
export * from './meta-v1.schema.js';
export * from './object-meta.schema.js';

/**
 * Every built-in schema by its OpenAPI definition name, in the form the
 * definition itself is published (type-level description, no `x-plinth-ref`
 * at the top). OpenAPI builders resolve `x-plinth-ref` names here first.
 */
export const sharedDefinitionSchemas: Readonly<Record<string, StructuralSchema>> = Object.freeze({
  [META_V1_NAMES.objectMeta]: objectMetaSchema,
  [META_V1_NAMES.listMeta]: listMetaSchema,
  [META_V1_NAMES.ownerReference]: ownerReferenceSchema,
  [META_V1_NAMES.managedFieldsEntry]: managedFieldsEntrySchema,
  [META_V1_NAMES.fieldsV1]: fieldsV1Schema,
  [META_V1_NAMES.time]: timeSchema,
  [META_V1_NAMES.status]: statusSchema,
  [META_V1_NAMES.statusDetails]: statusDetailsSchema,
  [META_V1_NAMES.statusCause]: statusCauseSchema,
  [META_V1_NAMES.deleteOptions]: deleteOptionsSchema,
  [META_V1_NAMES.preconditions]: preconditionsSchema,
  [META_V1_NAMES.watchEvent]: watchEventSchema,
  [META_V1_NAMES.patch]: patchSchema,
  [META_V1_NAMES.rawExtension]: rawExtensionSchema,
  [CORE_V1_NAMES.configMap]: configMapSchema,
  [CORE_V1_NAMES.configMapList]: configMapListSchema,
  [CORE_V1_NAMES.secret]: secretSchema,
  [CORE_V1_NAMES.secretList]: secretListSchema,
  [CORE_V1_NAMES.namespace]: namespaceSchema,
  [CORE_V1_NAMES.namespaceList]: namespaceListSchema,
  [CORE_V1_NAMES.namespaceSpec]: namespaceSpecSchema,
  [CORE_V1_NAMES.namespaceStatus]: namespaceStatusSchema,
  [CORE_V1_NAMES.namespaceCondition]: namespaceConditionSchema,
  [AUTOSCALING_V1_NAMES.scale]: scaleSchema,
  [AUTOSCALING_V1_NAMES.scaleSpec]: scaleSpecSchema,
  [AUTOSCALING_V1_NAMES.scaleStatus]: scaleStatusSchema,
});

const kindSchemas: Record<string, StructuralSchema> = {
  '/v1/ConfigMap': configMapSchema,
  '/v1/ConfigMapList': configMapListSchema,
  '/v1/Secret': secretSchema,
  '/v1/SecretList': secretListSchema,
  '/v1/Namespace': namespaceSchema,
  '/v1/NamespaceList': namespaceListSchema,
  '/v1/Status': statusSchema,
  '/v1/DeleteOptions': deleteOptionsSchema,
  'autoscaling/v1/Scale': scaleSchema,
  '/v1/ServiceAccount': serviceAccountSchema,
  'authentication.k8s.io/v1/TokenRequest': tokenRequestSchema,
  'authentication.k8s.io/v1/TokenReview': tokenReviewSchema,
  'authentication.k8s.io/v1/SelfSubjectReview': selfSubjectReviewSchema,
};

/**
 * The built-in schema of a top-level kind (group '' for core), or undefined
 * when Plinth defines none for it. The returned schema is shared: don't mutate it.
 */
export function builtinKindSchema(group: string, version: string, kind: string): StructuralSchema | undefined {
  return kindSchemas[`${group}/${version}/${kind}`];
}
