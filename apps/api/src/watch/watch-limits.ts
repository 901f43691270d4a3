import { readFileSync } from 'node:fs';
import { ApiError } from '@plinth/apimachinery';

/** File descriptors kept free for everything but watches: health checks, PostgreSQL, Redis, ordinary requests. */
export const FD_HEADROOM = 1024;

/** Limits of {@link WatchLimiter}; 0 means "no limit of this kind". */
export interface WatchLimits {
  perReplica: number;
  perTenant: number;
  perUser: number;
}

/**
 * The soft limit on open files of this process (Linux /proc), or undefined
 * where it cannot be read.
 */
export function openFileLimit(): number | undefined {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The per-replica watch limit to enforce: the configured one, and never so
 * many that watches leave fewer than FD_HEADROOM descriptors for the rest
 * (each watch holds one socket).
 */
export function effectiveReplicaLimit(configured: number, fileLimit = openFileLimit()): number {
  const byFiles = fileLimit === undefined ? 0 : Math.max(100, fileLimit - FD_HEADROOM);
  if (configured > 0 && byFiles > 0) return Math.min(configured, byFiles);
  return configured > 0 ? configured : byFiles;
}

/**
 * Counts open watches per replica, tenant and user, and refuses one more
 * past a limit with 429 TooManyRequests and `Retry-After`, as upstream's
 * max-in-flight filter answers. Not thread-safe (one event loop).
 */
export class WatchLimiter {
  private total = 0;
  private readonly byTenant = new Map<string, number>();
  private readonly byUser = new Map<string, number>();

  constructor(readonly limits: WatchLimits) {}

  /** Open watches on this replica. */
  get open(): number {
    return this.total;
  }

  /** Takes a slot for a watch of `user` in `tenant`, or throws ApiError 429 naming the limit reached. */
  acquire(tenant: string, user: string): void {
    const userKey = `${tenant}\u0000${user}`;
    const { perReplica, perTenant, perUser } = this.limits;
    if (perReplica > 0 && this.total >= perReplica) throw tooMany('this server has too many open watches');
    if (perTenant > 0 && (this.byTenant.get(tenant) ?? 0) >= perTenant) throw tooMany('the tenant has too many open watches');
    if (perUser > 0 && (this.byUser.get(userKey) ?? 0) >= perUser) throw tooMany('the user has too many open watches');
    this.total++;
    this.byTenant.set(tenant, (this.byTenant.get(tenant) ?? 0) + 1);
    this.byUser.set(userKey, (this.byUser.get(userKey) ?? 0) + 1);
  }

  /** Gives back the slot of a watch that ended (exactly once per acquire). */
  release(tenant: string, user: string): void {
    const userKey = `${tenant}\u0000${user}`;
    this.total--;
    decrement(this.byTenant, tenant);
    decrement(this.byUser, userKey);
  }
}

function decrement(m: Map<string, number>, k: string): void {
  const n = (m.get(k) ?? 1) - 1;
  if (n <= 0) m.delete(k);
  else m.set(k, n);
}

function tooMany(why: string): ApiError {
  return new ApiError(429, 'TooManyRequests', `Too many requests, please try again later: ${why}`, { retryAfterSeconds: 1 }, { 'Retry-After': '1' });
}
