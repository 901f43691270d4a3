import type { Storage } from '@plinth/storage';
import { ApiError } from '@plinth/apimachinery';

const WAIT_MS = 3000;
const POLL_MS = 50;

/**
 * Parses a resourceVersion parameter. Returns undefined for "" and "0";
 * throws ApiError 400 for anything that is not a revision.
 */
export function parseRevision(rv: string | undefined): number | undefined {
  if (rv === undefined || rv === '' || rv === '0') return undefined;
  if (!/^\d{1,15}$/.test(rv)) throw ApiError.badRequest(`invalid resource version: ${JSON.stringify(rv)}`);
  return Number(rv);
}

/**
 * Waits up to 3 s until revision `rv` exists on `tenant`'s shard (revisions
 * are its shard's); then throws 504 Timeout with
 * `Too large resource version` and Retry-After, as upstream does.
 */
export async function waitForRevision(lists: Storage, rv: string | undefined, tenant: string): Promise<void> {
  const want = parseRevision(rv);
  if (want === undefined) return;
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const current = await lists.currentRevision(tenant);
    if (current >= want) return;
    if (Date.now() >= deadline) {
      throw ApiError.timeout(`Timeout: Too large resource version: ${want}, current: ${current}`, 1, [
        { reason: 'ResourceVersionTooLarge', message: 'Too large resource version' },
      ]);
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
