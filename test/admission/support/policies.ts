import request from 'supertest';
import { eventually } from '../../support/eventually.js';

/** API paths of the admission policy kinds. */
export const VAP = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies';
export const VAPB = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings';
export const MAP = '/apis/admissionregistration.k8s.io/v1alpha1/mutatingadmissionpolicies';
export const MAPB = '/apis/admissionregistration.k8s.io/v1alpha1/mutatingadmissionpolicybindings';

/** A rule matching `resources` of the core group for `operations`. */
export function coreRule(resources: string[], operations: string[] = ['CREATE', 'UPDATE']): Record<string, unknown> {
  return { apiGroups: [''], apiVersions: ['v1'], operations, resources };
}

/** A ValidatingAdmissionPolicy body. */
export function validatingPolicy(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name }, spec };
}

/** A ValidatingAdmissionPolicyBinding body. */
export function validatingBinding(name: string, policyName: string, spec: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: { policyName, validationActions: ['Deny'], ...spec },
  };
}

/** A ConfigMap body in `namespace`. */
export function configMap(namespace: string, name: string, data: Record<string, string> = {}, labels?: Record<string, string>): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, ...(labels ? { labels } : {}) }, data };
}

/** Creates `ns` (ignoring AlreadyExists). */
export async function ensureNamespace(api: ReturnType<typeof request>, ns: string, labels?: Record<string, string>): Promise<void> {
  const res = await api.post('/api/v1/namespaces').send({ metadata: { name: ns, ...(labels ? { labels } : {}) } });
  if (res.status !== 201 && res.status !== 409) throw new Error(`creating namespace ${ns}: ${res.status} ${JSON.stringify(res.body)}`);
}
