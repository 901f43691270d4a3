import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import type { ResourceDefinition, ResourceStrategy, TableColumn, TableConvertor } from '../../registry/resource-definition.js';
import type { StructuralSchema } from '@plinth/apimachinery';
import { ageCell } from '../../table/human-duration.js';
import { ageColumn, nameColumn } from '../../table/standard-columns.js';
import { clusterRoleBindingSchema, clusterRoleSchema, roleBindingSchema, roleSchema } from './rbac-v1.schema.js';
import { clusterRoleBindingStrategy, clusterRoleStrategy, roleBindingStrategy, roleStrategy } from './rbac.strategy.js';
import { RBAC_API_GROUP } from './rbac.validation.js';

// Upstream's printers: roles show NAME and CREATED AT; bindings NAME, ROLE, AGE and (wide) USERS, GROUPS, SERVICEACCOUNTS.
const createdAtColumn: TableColumn = { ...ageColumn, name: 'Created At', type: 'date' };

const roleTable: TableConvertor = {
  columns: [nameColumn, createdAtColumn],
  cells: (o: KubeObject) => [o.metadata.name, o.metadata.creationTimestamp ?? null],
};

/** Upstream's SubjectsStrings: users, groups and `namespace/name` ServiceAccounts. */
function subjectsStrings(o: KubeObject): [string, string, string] {
  const users: string[] = [];
  const groups: string[] = [];
  const sas: string[] = [];
  for (const s of Array.isArray(o.subjects) ? o.subjects : []) {
    if (!isPlainObject(s)) continue;
    if (s.kind === 'User') users.push(String(s.name ?? ''));
    else if (s.kind === 'Group') groups.push(String(s.name ?? ''));
    else if (s.kind === 'ServiceAccount') sas.push(`${String(s.namespace ?? '')}/${String(s.name ?? '')}`);
  }
  return [users.join(', '), groups.join(', '), sas.join(', ')];
}

function bindingTable(roleDescription: string, what: string): TableConvertor {
  return {
    columns: [
      nameColumn,
      { name: 'Role', type: 'string', format: '', description: roleDescription, priority: 0 },
      ageColumn,
      { name: 'Users', type: 'string', format: '', description: `Users in the ${what}`, priority: 1 },
      { name: 'Groups', type: 'string', format: '', description: `Groups in the ${what}`, priority: 1 },
      { name: 'ServiceAccounts', type: 'string', format: '', description: `ServiceAccounts in the ${what}`, priority: 1 },
    ],
    cells: (o: KubeObject, now: Date) => {
      const ref = isPlainObject(o.roleRef) ? o.roleRef : {};
      return [o.metadata.name, `${String(ref.kind ?? '')}/${String(ref.name ?? '')}`, ageCell(o.metadata.creationTimestamp, now), ...subjectsStrings(o)];
    },
  };
}

function definition(kind: string, resource: string, namespaced: boolean, schema: StructuralSchema, strategy: ResourceStrategy, table: TableConvertor): ResourceDefinition {
  return {
    group: RBAC_API_GROUP,
    version: 'v1',
    resource,
    singular: kind.toLowerCase(),
    kind,
    listKind: `${kind}List`,
    namespaced,
    shortNames: [],
    categories: [],
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    subresources: [],
    schema,
    strategy,
    table,
    selectableFields: {},
    storageResource: `${RBAC_API_GROUP}/${resource}`,
    tracksGeneration: false,
    returnDeletedObject: false,
    nameValidation: 'path-segment',
    // Every replica's RBAC index follows these: a write is answered once this replica's index has it.
    cachedOnEveryReplica: true,
  };
}

const ROLE_REF_DOC =
  'RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.';
const CLUSTER_ROLE_REF_DOC =
  'RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.';

/** rbac.authorization.k8s.io/v1 Role (namespaced). */
export const roleResource = definition('Role', 'roles', true, roleSchema, roleStrategy, roleTable);
/** rbac.authorization.k8s.io/v1 ClusterRole. */
export const clusterRoleResource = definition('ClusterRole', 'clusterroles', false, clusterRoleSchema, clusterRoleStrategy, roleTable);
/** rbac.authorization.k8s.io/v1 RoleBinding (namespaced). */
export const roleBindingResource = definition('RoleBinding', 'rolebindings', true, roleBindingSchema, roleBindingStrategy, bindingTable(ROLE_REF_DOC, 'roleBinding'));
/** rbac.authorization.k8s.io/v1 ClusterRoleBinding. */
export const clusterRoleBindingResource = definition(
  'ClusterRoleBinding',
  'clusterrolebindings',
  false,
  clusterRoleBindingSchema,
  clusterRoleBindingStrategy,
  bindingTable(CLUSTER_ROLE_REF_DOC, 'clusterRoleBinding'),
);

/** The four RBAC kinds, in upstream's discovery order. */
export const rbacResources: ResourceDefinition[] = [clusterRoleBindingResource, clusterRoleResource, roleBindingResource, roleResource];
