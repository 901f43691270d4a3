import {
  mutatingAdmissionPolicyBindingSchema,
  mutatingAdmissionPolicySchema,
  validatingAdmissionPolicyBindingSchema,
  validatingAdmissionPolicySchema,
} from '../../schema/admissionregistration-policy.schema.js';
import { isPlainObject, type KubeObject, type StructuralSchema } from '@plinth/apimachinery';
import { ageCell } from '../../table/human-duration.js';
import { ageColumn, nameColumn } from '../../table/standard-columns.js';
import { STANDARD_VERBS, type ResourceDefinition, type ResourceStrategy, type TableConvertor } from '../../registry/resource-definition.js';
import {
  mutatingAdmissionPolicyBindingStrategy,
  mutatingAdmissionPolicyStrategy,
  validatingAdmissionPolicyBindingStrategy,
  validatingAdmissionPolicyStatusStrategy,
  validatingAdmissionPolicyStrategy,
} from './admission-policy.strategy.js';

const GROUP = 'admissionregistration.k8s.io';

type Json = Record<string, unknown>;

function spec(o: KubeObject): Json {
  return isPlainObject(o.spec) ? o.spec : {};
}

function paramKindCell(o: KubeObject): string {
  const p = spec(o).paramKind;
  return isPlainObject(p) ? `${String(p.apiVersion ?? '')}/${String(p.kind ?? '')}` : '<unset>';
}

/** upstream's printer: `ns/name`, `*\/name` without a namespace, the selector, or `<unset>`. */
function paramRefCell(o: KubeObject): string {
  const p = spec(o).paramRef;
  if (!isPlainObject(p)) return '<unset>';
  if (typeof p.name === 'string' && p.name) return p.namespace ? `${String(p.namespace)}/${p.name}` : `*/${p.name}`;
  if (isPlainObject(p.selector)) return JSON.stringify(p.selector);
  return '<unset>';
}

function countOf(o: KubeObject, field: string): number {
  const v = spec(o)[field];
  return Array.isArray(v) ? v.length : 0;
}

function policyTable(countName: string, field: string, what: string): TableConvertor {
  return {
    columns: [
      nameColumn,
      { name: countName, type: 'integer', format: '', description: `${countName} indicates the number of ${what} rules defined in this configuration`, priority: 0 },
      { name: 'ParamKind', type: 'string', format: '', description: 'ParamKind specifies the kind of resources used to parameterize this policy', priority: 0 },
      ageColumn,
    ],
    cells: (o, now) => [o.metadata.name, countOf(o, field), paramKindCell(o), ageCell(o.metadata.creationTimestamp, now)],
  };
}

const bindingTable: TableConvertor = {
  columns: [
    nameColumn,
    { name: 'PolicyName', type: 'string', format: '', description: 'PolicyName indicates the policy definition which the policy binding binded to', priority: 0 },
    { name: 'ParamRef', type: 'string', format: '', description: 'ParamRef indicates the param resource which sets the configration param', priority: 0 },
    ageColumn,
  ],
  cells: (o, now) => [o.metadata.name, String(spec(o).policyName ?? ''), paramRefCell(o), ageCell(o.metadata.creationTimestamp, now)],
};

function definition(
  version: string,
  kind: string,
  resource: string,
  schema: StructuralSchema,
  strategy: ResourceStrategy,
  table: TableConvertor,
  statusStrategy?: ResourceStrategy,
): ResourceDefinition {
  return {
    group: GROUP,
    version,
    resource,
    singular: kind.toLowerCase(),
    kind,
    listKind: `${kind}List`,
    namespaced: false,
    shortNames: [],
    categories: ['api-extensions'],
    verbs: STANDARD_VERBS,
    subresources: statusStrategy ? [{ name: 'status', kind, group: GROUP, version, verbs: ['get', 'patch', 'update'] }] : [],
    subresourceStrategies: statusStrategy ? { status: statusStrategy } : undefined,
    schema,
    strategy,
    table,
    selectableFields: {},
    storageResource: `${GROUP}/${resource}`,
    cachedOnEveryReplica: true,
    tracksGeneration: true,
    returnDeletedObject: false,
    nameValidation: 'subdomain',
  };
}

/** admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy (cluster-scoped, per tenant). */
export const validatingAdmissionPolicyResource = definition(
  'v1',
  'ValidatingAdmissionPolicy',
  'validatingadmissionpolicies',
  validatingAdmissionPolicySchema,
  validatingAdmissionPolicyStrategy,
  policyTable('Validations', 'validations', 'validation'),
  validatingAdmissionPolicyStatusStrategy,
);

/** admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding. */
export const validatingAdmissionPolicyBindingResource = definition(
  'v1',
  'ValidatingAdmissionPolicyBinding',
  'validatingadmissionpolicybindings',
  validatingAdmissionPolicyBindingSchema,
  validatingAdmissionPolicyBindingStrategy,
  bindingTable,
);

/** admissionregistration.k8s.io/v1alpha1 MutatingAdmissionPolicy (alpha). */
export const mutatingAdmissionPolicyResource = definition(
  'v1alpha1',
  'MutatingAdmissionPolicy',
  'mutatingadmissionpolicies',
  mutatingAdmissionPolicySchema,
  mutatingAdmissionPolicyStrategy,
  policyTable('Mutations', 'mutations', 'mutation'),
);

/** admissionregistration.k8s.io/v1alpha1 MutatingAdmissionPolicyBinding (alpha). */
export const mutatingAdmissionPolicyBindingResource = definition(
  'v1alpha1',
  'MutatingAdmissionPolicyBinding',
  'mutatingadmissionpolicybindings',
  mutatingAdmissionPolicyBindingSchema,
  mutatingAdmissionPolicyBindingStrategy,
  bindingTable,
);

/** ValidatingAdmissionPolicy and its binding; MutatingAdmissionPolicy's versions are in mutating-policy-versions.ts. */
export const admissionPolicyResources: ResourceDefinition[] = [validatingAdmissionPolicyResource, validatingAdmissionPolicyBindingResource];
