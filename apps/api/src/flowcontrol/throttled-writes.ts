import { LRUCache } from 'lru-cache';
import { ApiError } from '@plinth/apimachinery';

/** What refuses a tenant's writes while its share of validation time is used up (TenantValidationBudget). */
export interface ValidationShare {
  /** Throws ApiError 429 when `tenant` has no validation time left right now. */
  check(tenant: string): void;
}

const WRITES = new Set(['POST', 'PUT', 'PATCH']);

/**
 * Refuses, before its body is read, a write that would only be refused
 * after it: a tenant whose writes to a resource were answered 429 because
 * its share of validation time was used up (expensive CEL rules or schema
 * patterns) gets the same 429 for its next writes to that resource at
 * admission, while the share is still used up, instead of having each
 * 40 KB body read, parsed and taken through the create path first. Other
 * resources, and reads, are unaffected; the first write after the share
 * has refilled goes through as ever.
 */
export class ThrottledWrites {
  /** `tenant` + group/resource pairs whose writes were last refused for validation time (the 10,000 most recent). */
  private readonly refused = new LRUCache<string, true>({ max: 10_000 });

  constructor(private readonly share: ValidationShare) {}

  /** The 429 to answer at once, or undefined when the write should run. */
  refusal(tenant: string, method: string, group: string, resource: string): ApiError | undefined {
    if (!WRITES.has(method) || !this.refused.has(key(tenant, group, resource))) return undefined;
    try {
      this.share.check(tenant);
    } catch (err) {
      if (err instanceof ApiError && err.code === 429) return err;
      throw err;
    }
    this.refused.delete(key(tenant, group, resource));
    return undefined;
  }

  /** Records a finished write's status: a 429 while the tenant's share is used up marks the resource. */
  answered(tenant: string, method: string, group: string, resource: string, status: number): void {
    if (!WRITES.has(method) || status !== 429) return;
    try {
      this.share.check(tenant);
    } catch {
      this.refused.set(key(tenant, group, resource), true);
    }
  }
}

function key(tenant: string, group: string, resource: string): string {
  return `${tenant}\u0000${group}\u0000${resource}`;
}
