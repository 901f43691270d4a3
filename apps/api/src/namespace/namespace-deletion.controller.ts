import type { Logger } from 'pino';
import type { ObjectStoreRepository } from '@plinth/storage';
import type { ResourceDeleteService } from '../store/resource-delete.service.js';

/** How often every replica looks for Terminating namespaces nobody is emptying (after a restart, or a replica that died). */
export const NAMESPACE_SWEEP_INTERVAL_MS = 5000;

/**
 * Upstream's namespace controller: a namespace whose deletion was asked for
 * is marked Terminating by the DELETE, which answers at once; this
 * controller then deletes everything in it (finalizers respected), records
 * the deletion conditions on it while content remains, and once it is
 * empty takes the `kubernetes` finalizer off through the `finalize`
 * subresource, which removes it (see NamespacePurge). A namespace waiting
 * on finalizers is looked at again whenever an object in it goes, and by
 * the sweep. Each
 * namespace is worked on once at a time per replica; every replica may
 * work on it (the deletes are idempotent), and a periodic sweep picks up
 * namespaces left Terminating by a replica that stopped.
 */
export class NamespaceDeletionController {
  private readonly pending = new Set<string>();
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;

  constructor(
    private readonly deps: { deleter: ResourceDeleteService; objects: ObjectStoreRepository; logger: Logger },
  ) {}

  /** Queues `name` of `tenant` to be emptied and removed. */
  readonly enqueue = (tenant: string, name: string): void => {
    if (this.stopping) return;
    this.pending.add(`${tenant}\u0000${name}`);
    this.running ??= this.drain().finally(() => (this.running = undefined));
  };

  /** Starts the periodic sweep (and runs one now). */
  start(): void {
    this.timer = setInterval(() => void this.sweep(), NAMESPACE_SWEEP_INTERVAL_MS);
    this.timer.unref();
    void this.sweep();
  }

  /** Stops and waits for the namespace in progress. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    while (this.running) await this.running;
  }

  private async sweep(): Promise<void> {
    try {
      for (const ns of await this.deps.objects.terminatingNamespaces()) this.enqueue(ns.tenant, ns.name);
    } catch (err) {
      this.deps.logger.warn({ err: (err as Error).message }, 'terminating namespaces could not be listed');
    }
  }

  private async drain(): Promise<void> {
    while (this.pending.size > 0 && !this.stopping) {
      const key = this.pending.values().next().value as string;
      this.pending.delete(key);
      const [tenant, name] = key.split('\u0000');
      try {
        await this.deps.deleter.purgeNamespace(tenant, name);
      } catch (err) {
        this.deps.logger.warn({ tenant, namespace: name, err: (err as Error).message }, 'namespace deletion interrupted; the sweep resumes it');
      }
    }
  }
}
