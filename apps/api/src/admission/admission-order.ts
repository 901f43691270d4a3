import type { AdmissionModule } from '@plinth/admission';

/**
 * The admission plugins in the order they run, as kube-apiserver's
 * `--enable-admission-plugins` order: RBAC escalation first (upstream
 * checks it in RBAC storage, before admission), lifecycle checks, the
 * webhook egress policy, owner references, the CertificateSigningRequest
 * checks (approve and sign on signers, no system:masters), then in each phase policies
 * before webhooks (upstream's default order).
 */
export const ADMISSION_ORDER = [
  'RBACEscalation',
  'TenantLifecycle',
  'TenantPlacement',
  'ShardSecretReference',
  'NamespaceLifecycle',
  'APIBinding',
  'WebhookEgress',
  'OwnerReferencesPermissionEnforcement',
  'CertificateApproval',
  'CertificateSigning',
  'CertificateSubjectRestriction',
  'MutatingAdmissionPolicy',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
] as const;

/**
 * `plugins` sorted by {@link ADMISSION_ORDER}. A plugin the order does not
 * name is a wiring error and fails start-up; a named plugin may be absent
 * (switched off, as MutatingAdmissionPolicy behind its feature gate).
 */
export function orderedPlugins(plugins: AdmissionModule[]): AdmissionModule[] {
  const rank = new Map<string, number>(ADMISSION_ORDER.map((n, i) => [n, i]));
  for (const p of plugins) if (!rank.has(p.name)) throw new Error(`admission plugin "${p.name}" has no place in ADMISSION_ORDER`);
  return [...plugins].sort((a, b) => rank.get(a.name)! - rank.get(b.name)!);
}
