import { CronExpressionParser } from 'cron-parser';
import { ConfigError } from './config-error.js';
import type { EnvironmentVariables } from './environment-variables.dto.js';

/** Where scheduled snapshots go: a directory, or an S3-compatible bucket under a key prefix. */
export type SnapshotTargetConfig =
  | { kind: 'directory'; directory: string }
  | { kind: 's3'; bucket: string; prefix: string; endpoint?: string; region: string; accessKeyId?: string; secretAccessKey?: string };

/** The scheduled-snapshot part of AppConfig (docs/snapshots.md, "Scheduled snapshots"). */
export interface SnapshotConfig {
  /** Where snapshots are written and read (spec.source); undefined: scheduled snapshots are off. */
  snapshotTarget?: SnapshotTargetConfig;
  /** The platform's schedule (cron) for tenants without their own. */
  snapshotSchedule?: string;
  /** Snapshots kept per tenant by default. */
  snapshotKeep: number;
  /** Recipients Secrets are sealed to when a tenant names none. */
  snapshotRecipients: string[];
}

/** The snapshot settings of the validated environment. Throws ConfigError for both targets at once, a schedule without a target, or a bad cron expression. */
export function readSnapshotConfig(env: EnvironmentVariables): SnapshotConfig {
  if (env.PLINTH_SNAPSHOT_DIR && env.PLINTH_SNAPSHOT_S3_URL) throw new ConfigError('invalid configuration: set one of PLINTH_SNAPSHOT_DIR and PLINTH_SNAPSHOT_S3_URL, not both');
  let snapshotTarget: SnapshotTargetConfig | undefined;
  if (env.PLINTH_SNAPSHOT_DIR) snapshotTarget = { kind: 'directory', directory: env.PLINTH_SNAPSHOT_DIR };
  else if (env.PLINTH_SNAPSHOT_S3_URL) {
    const rest = env.PLINTH_SNAPSHOT_S3_URL.slice('s3://'.length);
    const slash = rest.indexOf('/');
    const bucket = slash < 0 ? rest : rest.slice(0, slash);
    const prefix = slash < 0 ? '' : rest.slice(slash + 1).replace(/^\/+|\/+$/g, '');
    snapshotTarget = {
      kind: 's3',
      bucket,
      prefix,
      endpoint: env.PLINTH_SNAPSHOT_S3_ENDPOINT,
      region: env.PLINTH_SNAPSHOT_S3_REGION ?? 'us-east-1',
      accessKeyId: env.PLINTH_SNAPSHOT_S3_ACCESS_KEY_ID,
      secretAccessKey: env.PLINTH_SNAPSHOT_S3_SECRET_ACCESS_KEY,
    };
  }
  if (env.PLINTH_SNAPSHOT_SCHEDULE) {
    if (!snapshotTarget) throw new ConfigError('invalid configuration: PLINTH_SNAPSHOT_SCHEDULE needs PLINTH_SNAPSHOT_DIR or PLINTH_SNAPSHOT_S3_URL');
    try {
      CronExpressionParser.parse(env.PLINTH_SNAPSHOT_SCHEDULE, { tz: 'UTC' });
    } catch (err) {
      throw new ConfigError(`invalid configuration:\n  PLINTH_SNAPSHOT_SCHEDULE=${JSON.stringify(env.PLINTH_SNAPSHOT_SCHEDULE)}: not a cron expression (${(err as Error).message})`);
    }
  }
  return {
    snapshotTarget,
    snapshotSchedule: env.PLINTH_SNAPSHOT_SCHEDULE,
    snapshotKeep: env.PLINTH_SNAPSHOT_KEEP ?? 7,
    snapshotRecipients: env.PLINTH_SNAPSHOT_RECIPIENTS ? env.PLINTH_SNAPSHOT_RECIPIENTS.split(',') : [],
  };
}
