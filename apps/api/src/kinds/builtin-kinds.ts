import { authorizationResources } from '../authz/reviews/authorization-resources.js';
import { customResourceDefinitionResource } from '../crd/crd-resource.js';
import { admissionPolicyResources } from './admissionregistration/admission-policy.resources.js';
import { mutatingPolicyResources } from './admissionregistration/mutating-policy-versions.js';
import { rbacResources } from './rbac/rbac.resources.js';
import { admissionRegistrationResources } from './admissionregistration/webhook-configuration.resources.js';
import { authenticationResources } from './authentication/authentication.resources.js';
import type { ResourceDefinition } from '../registry/resource-definition.js';
import { configMapResource } from './configmap/configmap.resource.js';
import { namespaceResource } from './namespace/namespace.resource.js';
import { secretResource } from './secret/secret.resource.js';
import { eventResource, eventsV1Resource } from './event/event.resource.js';
import { leaseResource } from './lease/lease.resource.js';
import { featureGateResource } from './feature-gate/feature-gate.resource.js';
import { resourceQuotaResource } from '../quota/resource-quota.resource.js';
import { csrResource } from './certificates/csr.resource.js';
import { leaseCandidateResource } from './coordination/lease-candidate.resource.js';
import { storageVersionMigrationResource } from './storagemigration/storage-version-migration.resource.js';

/** The built-in kinds every tenant has. */
export const builtinResources: ResourceDefinition[] = [
  namespaceResource,
  configMapResource,
  secretResource,
  resourceQuotaResource,
  eventResource,
  eventsV1Resource,
  leaseResource,
  leaseCandidateResource,
  ...admissionRegistrationResources,
  ...admissionPolicyResources,
  ...mutatingPolicyResources,
  customResourceDefinitionResource,
  ...authenticationResources,
  ...rbacResources,
  ...authorizationResources,
  featureGateResource,
  csrResource,
  storageVersionMigrationResource,
];
