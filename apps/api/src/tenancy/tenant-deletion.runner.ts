import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { TenantRepository } from '@plinth/storage';

/** Rows deleted per table per statement: small enough that no statement holds locks for long. */
export const TENANT_PURGE_BATCH = 500;

/**
 * Removes everything stored for a tenant: marks it Terminating (from then on
 * storage refuses its writes), destroys its data keys (`destroyKeys`: the
 * crypto-erasure of its encrypted objects, first, so that even rows a crash
 * leaves behind, and every backup, stay unreadable), deletes its rows from every per-tenant table
 * in bounded batches, each its own short statement, then its own row, which
 * frees the name, and last whatever rows of the name other shards hold
 * (`elsewhere`: a move's copy or the shard a move left). Idempotent and
 * resumable: running it again, here or on another replica, continues where
 * it stopped. One run per tenant at a time per process.
 */
export class TenantDeletionRunner {
  private readonly running = new Map<string, Promise<void>>();

  constructor(
    private readonly tenants: TenantRepository,
    private readonly logger: Logger,
    private readonly batch = TENANT_PURGE_BATCH,
    private readonly destroyKeys: (tenant: string) => Promise<number> = async () => 0,
    /** Removes the tenant's rows from every shard but the one it lives on; returns on how many shards it found some. */
    private readonly elsewhere: (tenant: string) => Promise<number> = async () => 0,
  ) {}

  /** True while this process is deleting `name`. */
  isRunning(name: string): boolean {
    return this.running.has(name);
  }

  /** Runs (or joins the run of) the deletion of `name`; resolves once its row is gone. */
  run(name: string): Promise<void> {
    let run = this.running.get(name);
    if (!run) {
      run = this.purge(name).finally(() => this.running.delete(name));
      this.running.set(name, run);
    }
    return run;
  }

  private async purge(name: string): Promise<void> {
    if (!(await this.tenants.markTerminating(name))) {
      await this.purgeElsewhere(name);
      return;
    }
    const keys = await this.destroyKeys(name);
    if (keys > 0) this.logger.info({ tenant: name, keys }, 'tenant data keys destroyed (crypto-erasure)');
    let total = 0;
    // Another replica may finish first: stop once the row is gone.
    while ((await this.tenants.get(name))?.phase === 'Terminating') {
      const n = await this.tenants.purgeBatch(name, this.batch);
      total += n;
      if (n === 0 && (await this.tenants.remove(name))) break;
      // Let other tenants' requests run between batches.
      await yieldToEventLoop();
    }
    await this.purgeElsewhere(name);
    this.logger.info({ tenant: name, rows: total }, 'tenant content deleted');
  }

  private async purgeElsewhere(name: string): Promise<void> {
    const shards = await this.elsewhere(name);
    if (shards > 0) this.logger.info({ tenant: name, shards }, 'tenant rows removed from shards it did not live on');
  }
}
