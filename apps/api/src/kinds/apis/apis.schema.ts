import type { StructuralSchema } from '@plinth/apimachinery';
import { objectMetaProperty, typeMetaProperties } from '../../schema/object-meta.schema.js';

/** The API group of APIExport and APIBinding (kcp's `apis.kcp.io`, Plinth's name). */
export const APIS_GROUP = 'apis.plinth.dev';
/** The version served. */
export const APIS_VERSION = 'v1alpha1';
/** Where APIExport objects are stored (per tenant, cluster-scoped). */
export const APIEXPORT_STORAGE_RESOURCE = `${APIS_GROUP}/apiexports`;
/** Where APIBinding objects are stored (per tenant, cluster-scoped). */
export const APIBINDING_STORAGE_RESOURCE = `${APIS_GROUP}/apibindings`;
/** The annotation naming the tenant of an object served through an export's view (kcp's `kcp.io/cluster`). */
export const TENANT_ANNOTATION = 'tenancy.plinth.dev/tenant';

/**
 * The finalizer every APIBinding carries (set by its strategy on create and
 * update, as upstream's CRD strategy sets `customresourcecleanup.apiextensions.k8s.io`):
 * its deletion waits until the binding-cleanup controller deleted the
 * tenant's objects of the bound resources, whenever that controller runs.
 */
export const APIBINDING_CLEANUP_FINALIZER = 'apibindingcleanup.apis.plinth.dev';

const groupResource: StructuralSchema = {
  type: 'object',
  required: ['resource'],
  properties: {
    group: { type: 'string', description: 'group is the API group of the resource ("" for the core group).' },
    resource: { type: 'string', description: 'resource is the plural, lower-case resource name.' },
  },
};

const permissionClaim: StructuralSchema = {
  type: 'object',
  required: ['resource'],
  properties: {
    group: { type: 'string', description: 'group of the claimed resource.' },
    resource: { type: 'string', description: 'resource claimed in every binding tenant.' },
    verbs: { type: 'array', items: { type: 'string' }, description: 'verbs the provider asks for on the claimed resource (default get, list, watch; "*" for every verb).' },
    all: { type: 'boolean', description: 'all claims every object of the resource; either all or resourceSelector is set.' },
    resourceSelector: {
      type: 'array',
      description: 'resourceSelector claims the objects of these names and/or namespaces only.',
      items: { type: 'object', properties: { name: { type: 'string' }, namespace: { type: 'string' } } },
    },
  },
};

/** A claim of the export and the consumer's answer to it (kcp's AcceptablePermissionClaim). */
const acceptablePermissionClaim: StructuralSchema = {
  ...permissionClaim,
  required: ['resource', 'state'],
  properties: {
    ...permissionClaim.properties,
    state: { type: 'string', description: 'state is Accepted (the provider may use the claim in this tenant) or Rejected.' },
  },
};

const condition: StructuralSchema = {
  type: 'object',
  properties: {
    type: { type: 'string' },
    status: { type: 'string' },
    reason: { type: 'string' },
    message: { type: 'string' },
    lastTransitionTime: { type: 'string', format: 'date-time' },
  },
};

/** apis.plinth.dev/v1alpha1 APIExport. */
export const apiExportSchema: StructuralSchema = {
  type: 'object',
  description: 'APIExport offers CustomResourceDefinitions of its tenant (the provider) to other tenants, which bind it with an APIBinding.',
  properties: {
    ...typeMetaProperties(),
    metadata: objectMetaProperty(),
    spec: {
      type: 'object',
      properties: {
        resources: {
          type: 'array',
          description: 'resources lists the CustomResourceDefinitions of this tenant that are exported, by group and plural resource.',
          items: groupResource,
        },
        permissionClaims: {
          type: 'array',
          description: 'permissionClaims are the permissions the provider asks of binding tenants: each binding accepts or rejects each claim (docs/api-sharing.md).',
          items: permissionClaim,
        },
      },
    },
    status: {
      type: 'object',
      properties: {
        virtualWorkspaces: {
          type: 'array',
          description: 'virtualWorkspaces are the URLs (paths) where the provider lists and watches the bound objects of every binding tenant.',
          items: { type: 'object', properties: { url: { type: 'string' } } },
        },
        conditions: { type: 'array', items: condition },
      },
    },
  },
};

/** apis.plinth.dev/v1alpha1 APIBinding. */
export const apiBindingSchema: StructuralSchema = {
  type: 'object',
  description: 'APIBinding binds an APIExport of another tenant: its resources are then served in this tenant as its own.',
  properties: {
    ...typeMetaProperties(),
    metadata: objectMetaProperty(),
    spec: {
      type: 'object',
      required: ['reference'],
      properties: {
        reference: {
          type: 'object',
          required: ['export'],
          properties: {
            export: {
              type: 'object',
              required: ['path', 'name'],
              properties: {
                path: { type: 'string', description: 'path is the tenant of the APIExport (the provider).' },
                name: { type: 'string', description: 'name of the APIExport.' },
              },
            },
          },
        },
        permissionClaims: {
          type: 'array',
          description: 'permissionClaims answers the claims of the export: each one, as the export makes it, with state Accepted or Rejected.',
          items: acceptablePermissionClaim,
        },
      },
    },
    status: {
      type: 'object',
      properties: {
        phase: { type: 'string', description: 'phase is Bound once the exported resources are served in this tenant.' },
        apiExportTenant: { type: 'string', description: 'the tenant of the bound export.' },
        boundResources: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              group: { type: 'string' },
              resource: { type: 'string' },
              schema: { type: 'object', properties: { name: { type: 'string' }, UID: { type: 'string' } } },
              storageVersions: { type: 'array', items: { type: 'string' } },
            },
          },
        },
        exportPermissionClaims: { type: 'array', description: 'the claims the export makes.', items: permissionClaim },
        appliedPermissionClaims: { type: 'array', description: 'the claims this binding accepted, which the provider\'s view grants.', items: permissionClaim },
        conditions: { type: 'array', items: condition },
      },
    },
  },
};
