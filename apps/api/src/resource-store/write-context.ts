import type { UserInfo } from '@plinth/admission';
import type { ResourceDefinition } from '../registry/resource-definition.js';

/** One write request, as the store needs it. */
export interface WriteContext {
  tenant: string;
  def: ResourceDefinition;
  /** '' for cluster-scoped kinds. */
  namespace: string;
  subresource: string;
  user: UserInfo;
  dryRun: boolean;
  /** The request's options object (CreateOptions, UpdateOptions…) as sent to webhooks. */
  options: Record<string, unknown>;
  /** Collected warnings, sent as `Warning: 299` headers. */
  warnings: string[];
  /** Audit annotations admission adds (policies' auditAnnotations and Audit actions), for the request's audit events. */
  auditAnnotations?: Record<string, string>;
  /** The manager recorded in managedFields (`fieldManager`, else from the User-Agent); undefined: a system write, not tracked. */
  fieldManager?: string;
  /** Server-side apply computed managedFields already: the store leaves them as they are. */
  applied?: boolean;
}

/** A write context of the API server itself (admission runs; the identity is the system's). */
export function systemWriteContext(tenant: string, def: ResourceDefinition, namespace = ''): WriteContext {
  return {
    tenant,
    def,
    namespace,
    subresource: '',
    user: { username: 'system:apiserver', uid: '', groups: ['system:masters', 'system:authenticated'] },
    dryRun: false,
    options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
    warnings: [],
  };
}
