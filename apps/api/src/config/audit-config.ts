import type { EnvironmentVariables } from './environment-variables.dto.js';

/** The audit part of AppConfig: the policy, where events go, and how the log is rotated. */
export interface AuditConfig {
  /** An audit.k8s.io/v1 Policy file; with auditLogPath, every request the policy selects is audited. */
  auditPolicyFile: string;
  /** Where audit events go: a file, or `-` for standard output. */
  auditLogPath: string;
  /** Rotate the audit log at this size, MiB. */
  auditLogMaxSizeMiB: number;
  /** Rotated audit logs kept. */
  auditLogMaxBackups: number;
}

/** The audit settings of the validated environment, defaults filled in ('' when unset). Pure; never throws. */
export function readAuditConfig(env: EnvironmentVariables): AuditConfig {
  return {
    auditPolicyFile: env.PLINTH_AUDIT_POLICY_FILE ?? '',
    auditLogPath: env.PLINTH_AUDIT_LOG_PATH ?? '',
    auditLogMaxSizeMiB: env.PLINTH_AUDIT_LOG_MAXSIZE ?? 100,
    auditLogMaxBackups: env.PLINTH_AUDIT_LOG_MAXBACKUP ?? 10,
  };
}
