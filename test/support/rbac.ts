import request from 'supertest';

/** An RBAC subject as bindings name it. */
export type Subject = { kind: 'User' | 'Group'; name: string } | { kind: 'ServiceAccount'; name: string; namespace: string };

function subjectJson(s: Subject): Record<string, string> {
  return s.kind === 'ServiceAccount' ? { kind: s.kind, name: s.name, namespace: s.namespace } : { kind: s.kind, apiGroup: 'rbac.authorization.k8s.io', name: s.name };
}

/**
 * Binds `subjects` to the ClusterRole `role` across the tenant at `prefix`
 * ('' for the default tenant, '/clusters/<name>' for another), as the
 * platform administrator, the way `kubectl create clusterrolebinding` does.
 */
export async function grantClusterRole(url: string, name: string, role: string, subjects: Subject[], prefix = ''): Promise<void> {
  await request(url)
    .post(`${prefix}/apis/rbac.authorization.k8s.io/v1/clusterrolebindings`)
    .send({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects: subjects.map(subjectJson) })
    .expect(201);
}

/** Binds `subjects` to the ClusterRole `role` inside `namespace` only (a RoleBinding), as the platform administrator. */
export async function grantInNamespace(url: string, namespace: string, name: string, role: string, subjects: Subject[], prefix = ''): Promise<void> {
  await request(url)
    .post(`${prefix}/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`)
    .send({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name, namespace }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects: subjects.map(subjectJson) })
    .expect(201);
}
