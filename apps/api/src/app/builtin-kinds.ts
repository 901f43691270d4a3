import { authorizationResources } from '../kinds/authorization/authorization.resources.js';
import { customResourceDefinitionResource } from '../kinds/customresourcedefinition/crd.resource.js';
import { admissionPolicyResources } from '../kinds/admissionregistration/admission-policy.resources.js';
import { mutatingPolicyResources } from '../kinds/admissionregistration/mutating-policy-versions.js';
import { rbacResources } from '../kinds/rbac/rbac.resources.js';
import { admissionRegistrationResources } from '../kinds/admissionregistration/webhook-configuration.resources.js';
import { authenticationResources } from '../kinds/authentication/authentication.resources.js';
import type { ResourceDefinition } from '../registry/resource-definition.js';
import { configMapResource } from '../kinds/configmap/configmap.resource.js';
import { namespaceResource } from '../kinds/namespace/namespace.resource.js';
import { secretResource } from '../kinds/secret/secret.resource.js';
import { eventResource, eventsV1Resource } from '../kinds/event/event.resource.js';
import { leaseResource } from '../kinds/lease/lease.resource.js';
import { featureGateResource } from '../kinds/feature-gate/feature-gate.resource.js';
import { resourceQuotaResource } from '../kinds/resourcequota/resource-quota.resource.js';
import { csrResource } from '../kinds/certificates/csr.resource.js';
import { leaseCandidateResource } from '../kinds/coordination/lease-candidate.resource.js';
import { tenantAuthorizationWebhookResource } from '../kinds/authorization/tenant-authorization-webhook.resource.js';
import { storageVersionMigrationResource } from '../kinds/storagemigration/storage-version-migration.resource.js';
import { apiBindingResource, apiExportResource } from '../kinds/apis/apis.resource.js';

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
  tenantAuthorizationWebhookResource,
  featureGateResource,
  csrResource,
  storageVersionMigrationResource,
  apiExportResource,
  apiBindingResource,
];
