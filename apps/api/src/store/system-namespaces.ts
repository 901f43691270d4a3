import { ApiError } from '@plinth/apimachinery';
import type { PlinthServices } from '../plinth-services.js';
import type { WriteContext } from './write-context.js';

/** The namespaces every Kubernetes cluster has, created in every tenant. */
export const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/**
 * Creates the system namespaces of `tenant` that are missing, as
 * kube-apiserver's system-namespaces controller does (kubectl's default
 * namespace is `default`). Idempotent and safe from several replicas at
 * once: an existing namespace is left alone. Returns the names it created.
 */
export async function ensureSystemNamespaces(services: PlinthServices, tenant: string): Promise<string[]> {
  const def = services.registry.lookup(tenant, '', 'v1', 'namespaces');
  if (!def) return [];
  const created: string[] = [];
  for (const name of SYSTEM_NAMESPACES) {
    const ctx: WriteContext = {
      tenant,
      def,
      namespace: '',
      subresource: '',
      user: { username: 'system:apiserver', groups: ['system:masters'] },
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
      warnings: [],
    };
    try {
      await services.store.create(ctx, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      created.push(name);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 409)) throw err;
    }
  }
  return created;
}
