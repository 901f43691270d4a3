import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Metrics } from '../observability/metrics.js';
import { AuditLogWriter } from '../audit/audit-log.writer.js';
import { AuditPolicy } from '../audit/audit-policy.js';
import { AUDIT_LOG, type AuditLog } from '../audit/audit-log.js';

/** The audit log when PLINTH_AUDIT_POLICY_FILE and PLINTH_AUDIT_LOG_PATH are set (a bad policy stops start-up). */
function auditLog(config: AppConfig, metrics: Metrics): AuditLog | null {
  if (!config.auditPolicyFile || !config.auditLogPath) return null;
  const policy = AuditPolicy.fromFile(config.auditPolicyFile);
  const writer = new AuditLogWriter({
    path: config.auditLogPath,
    maxBytes: config.auditLogMaxSizeMiB * 1024 * 1024,
    maxBackups: config.auditLogMaxBackups,
    maxBufferedBytes: 16 * 1024 * 1024,
    dropped: () => metrics.auditDropped.inc(),
  });
  return { policy, writer };
}

/** Auditing in audit.k8s.io/v1 Event format (the request hook is installed by the HTTP module); the writer is flushed at shutdown. */
@Module({
  providers: [{ provide: AUDIT_LOG, useFactory: auditLog, inject: [APP_CONFIG, Metrics] }],
  exports: [AUDIT_LOG],
})
export class AuditModule implements OnApplicationShutdown {
  constructor(@Inject(AUDIT_LOG) private readonly audit: AuditLog | null) {}

  async onApplicationShutdown(): Promise<void> {
    await this.audit?.writer.close();
  }
}
