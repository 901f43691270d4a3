import { CronExpressionParser } from 'cron-parser';
import type { TenantObject } from '../kinds/tenant/tenant-api.js';

/** The platform's defaults (PLINTH_SNAPSHOT_SCHEDULE, _KEEP, _RECIPIENTS). */
export interface PlatformSnapshotPolicy {
  schedule?: string;
  keep: number;
  recipients: string[];
}

/** What the scheduler does for one tenant. */
export interface SnapshotPlan {
  schedule: string;
  keep: number;
  recipients: string[];
}

/**
 * The plan of `tenant`: its spec.snapshots over the platform's defaults;
 * undefined when it has no schedule (neither its own nor the platform's)
 * or is suspended. Pure.
 */
export function planOf(tenant: TenantObject, platform: PlatformSnapshotPolicy): SnapshotPlan | undefined {
  const own = tenant.spec?.snapshots;
  if (own?.suspend === true) return undefined;
  const schedule = own?.schedule || platform.schedule;
  if (!schedule) return undefined;
  return { schedule, keep: own?.keep ?? platform.keep, recipients: own?.recipients?.length ? own.recipients : platform.recipients };
}

/**
 * The first time `schedule` (cron, UTC) names after `after`; undefined when
 * the expression does not parse (validation keeps such out of Tenants). Pure.
 */
export function nextRun(schedule: string, after: Date): Date | undefined {
  try {
    return CronExpressionParser.parse(schedule, { currentDate: after, tz: 'UTC' }).next().toDate();
  } catch {
    return undefined;
  }
}
