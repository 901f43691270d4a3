import type { Logger } from 'pino';
import type { ChangeObserver } from '@plinth/storage';

/** What the refresher needs. */
export interface KubeconfigRefresherDeps {
  /** The tenants that exist now (the Tenant objects of the platform scope). */
  tenants: () => Promise<string[]>;
  /** Rewrites the kubeconfig with a context per tenant in `tenants`. */
  write: (tenants: string[]) => Promise<unknown>;
  /** The Tenant objects' storage resource, followed on the change stream. */
  tenantResource: string;
  /** Subscribes to the change stream (watch's ObserveChanges; typed here so startup/ stays below watch/). */
  observe: (resource: string, observer: ChangeObserver) => () => void;
  logger: Logger;
}

/**
 * Keeps the generated administrator kubeconfig's contexts in step with
 * the tenants: rewritten once at start (tenants created by earlier runs)
 * and whenever a Tenant is created or deleted. Rewrites never overlap; a
 * change during one schedules one more. Failures are logged, not thrown.
 */
export class KubeconfigRefresher {
  private running: Promise<void> | undefined;
  private again = false;
  private unobserve: (() => void) | undefined;

  constructor(private readonly deps: KubeconfigRefresherDeps) {}

  /** Follows the Tenant objects and rewrites now. */
  start(): void {
    this.unobserve = this.deps.observe(this.deps.tenantResource, {
      onChange: (c) => {
        if (c.type === 'ADDED' || c.type === 'DELETED') this.refresh();
      },
      onReset: () => this.refresh(),
    });
    this.refresh();
  }

  /** Stops following and waits for a rewrite in progress. */
  async stop(): Promise<void> {
    this.unobserve?.();
    this.unobserve = undefined;
    this.again = false;
    await this.running;
  }

  /** Resolves once no rewrite is pending (for tests and shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private refresh(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.deps.write(await this.deps.tenants());
        } catch (err) {
          this.deps.logger.warn({ err: (err as Error).message }, 'kubeconfig: contexts could not be rewritten');
        }
      } while (this.again);
      this.running = undefined;
    })();
  }
}
