import type { AuditLogWriter } from './audit-log.writer.js';
import type { AuditPolicy } from './audit-policy.js';

/** The audit policy and log writer, when both are configured. */
export interface AuditLog {
  policy: AuditPolicy;
  writer: AuditLogWriter;
}

/** Injection token of the {@link AuditLog}, or null when auditing is off. */
export const AUDIT_LOG = Symbol('AUDIT_LOG');
