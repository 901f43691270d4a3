/** The namespaces every Kubernetes cluster has, created in every tenant (see tenancy/tenant-provisioner.ts). */
export const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];
