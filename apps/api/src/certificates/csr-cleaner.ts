import type { Logger } from 'pino';
import { ApiError, type KubeObject } from '@plinth/apimachinery';
import { STORAGE, type Storage } from '@plinth/storage';
import type { Controller } from '../controllers/controller.js';
import { CSR_STORAGE_RESOURCE } from '../kinds/certificates/csr-api.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import type { ResourceDeleteService } from '../resource-store/resource-delete.service.js';
import type { WriteContext } from '../resource-store/write-context.js';
import { csrIsStale } from './client-signer-policy.js';

/** How often the cleaner looks, as upstream's (pollingInterval). */
export const CSR_CLEANER_INTERVAL_MS = 3600_000;

/** What the cleaner needs. */
export interface CsrCleanerDeps {
  registry: ResourceRegistry;
  lists: Storage;
  deleter: ResourceDeleteService;
  tenants: () => Promise<string[]>;
  logger: Logger;
  intervalMs?: number;
  now?: () => Date;
}

/**
 * Upstream's csrcleaner (pkg/controller/certificates/cleaner), one per
 * cluster (elected): on start and then hourly, deletes the requests of
 * every tenant that {@link csrIsStale} says are done with (approved and
 * issued, denied or failed an hour ago; pending for a day; or whose
 * certificate expired). Deletion is conditional on the uid seen.
 */
export class CsrCleaner implements Controller {
  readonly name = 'csrcleaner';
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly deps: CsrCleanerDeps) {}

  start(): void {
    this.running = this.sweep();
    this.timer = setInterval(() => {
      this.running ??= this.sweep();
    }, this.deps.intervalMs ?? CSR_CLEANER_INTERVAL_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One pass over every tenant's requests; failures are logged (the next pass retries). Never rejects. */
  async sweep(): Promise<void> {
    try {
      const now = this.deps.now?.() ?? new Date();
      for (const tenant of await this.deps.tenants()) {
        const def = this.deps.registry.lookup(tenant, 'certificates.k8s.io', 'v1', 'certificatesigningrequests');
        if (!def) continue;
        for (const item of (await this.deps.lists.list({ tenant, resource: CSR_STORAGE_RESOURCE })).items) {
          const csr = item.body as KubeObject;
          if (csrIsStale(csr, now)) await this.remove(tenant, def, csr);
        }
      }
    } catch (err) {
      this.deps.logger.warn({ err: (err as Error).message }, `${this.name}: sweep failed`);
    } finally {
      this.running = undefined;
    }
  }

  private async remove(tenant: string, def: WriteContext['def'], csr: KubeObject): Promise<void> {
    const ctx: WriteContext = {
      tenant,
      def,
      namespace: '',
      subresource: '',
      user: { username: 'system:serviceaccount:kube-system:certificate-controller', uid: '', groups: ['system:masters', 'system:authenticated'] },
      dryRun: false,
      options: { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1' },
      warnings: [],
    };
    try {
      await this.deps.deleter.delete(ctx, csr.metadata.name ?? '', { uid: csr.metadata.uid });
    } catch (err) {
      if (!(err instanceof ApiError && (err.code === 404 || err.code === 409))) throw err;
    }
  }
}
