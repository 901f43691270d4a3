import type { Logger } from 'pino';
import type { KubeObject } from '@plinth/apimachinery';
import { ALL_RESOURCES, type CachedChange, type ObjectStoreRepository } from '@plinth/storage';
import type { Controller } from '../controllers/controller.js';
import type { ControllerManager } from '../controllers/controller-manager.js';
import type { WorkQueue } from '../controllers/work-queue.js';
import type { ObserveChanges } from '../watch/observe-changes.js';
import type { NamespaceDeleter } from './namespace-deleter.js';

/** How often the controller looks for Terminating namespaces nobody is emptying (missed changes). */
export const NAMESPACE_SWEEP_INTERVAL_MS = 5000;

/** What the namespace controller needs. */
export interface NamespaceDeletionDeps {
  deleter: NamespaceDeleter;
  objects: ObjectStoreRepository;
  observe: ObserveChanges;
  logger: Logger;
  /** Gives the controller its work queue. */
  queues: Pick<ControllerManager, 'queue'>;
}

const keyOf = (tenant: string, name: string): string => `${tenant}\u0000${name}`;

/**
 * Upstream's namespace controller: a namespace whose deletion was asked for
 * is marked Terminating by the DELETE, which answers at once; this
 * controller then deletes everything in it (finalizers respected), records
 * the deletion conditions on it while content remains, and once it is
 * empty takes the `kubernetes` finalizer off through the `finalize`
 * subresource, which removes it (see NamespacePurge). A controller of the
 * ControllerManager (one replica runs it): it follows the change stream
 * (a namespace entering deletion; an object removed from a namespace it
 * waits on), sweeps for Terminating namespaces every few seconds and on
 * start, and works on one namespace at a time.
 */
export class NamespaceDeletionController implements Controller {
  readonly name = 'namespace-controller';
  private readonly queue: WorkQueue;
  /** Namespaces seen Terminating and not yet gone: an object leaving one brings it back. */
  private readonly waiting = new Set<string>();
  private stopObserving: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: NamespaceDeletionDeps) {
    this.queue = deps.queues.queue({ name: this.name, workers: 1, process: (key) => this.purge(key) });
  }

  /** Queues `name` of `tenant` to be emptied and removed (ignored unless this replica runs the controller). */
  readonly enqueue = (tenant: string, name: string): void => {
    if (!this.queue.active) return;
    this.waiting.add(keyOf(tenant, name));
    this.queue.add(keyOf(tenant, name));
  };

  /** Follows the change stream and starts the periodic sweep (and runs one now). */
  start(): void {
    this.queue.start();
    this.stopObserving = this.deps.observe(ALL_RESOURCES, { onChange: (c) => this.onChange(c), onReset: () => void this.sweep() });
    this.timer = setInterval(() => void this.sweep(), NAMESPACE_SWEEP_INTERVAL_MS);
    this.timer.unref();
    void this.sweep();
  }

  /** Stops and waits for the namespace in progress. */
  async stop(): Promise<void> {
    this.stopObserving?.();
    this.stopObserving = undefined;
    if (this.timer) clearInterval(this.timer);
    await this.queue.shutDown();
    this.waiting.clear();
  }

  private onChange(c: CachedChange): void {
    if (c.key.resource === 'namespaces' && c.key.namespace === '') {
      if (c.type !== 'DELETED' && (c.object as KubeObject | undefined)?.metadata?.deletionTimestamp) this.enqueue(c.key.tenant, c.key.name);
      return;
    }
    if (c.type === 'DELETED' && c.key.namespace && this.waiting.has(keyOf(c.key.tenant, c.key.namespace))) this.queue.add(keyOf(c.key.tenant, c.key.namespace));
  }

  private async sweep(): Promise<void> {
    if (!this.queue.active) return;
    try {
      for (const ns of await this.deps.objects.terminatingNamespaces()) this.enqueue(ns.tenant, ns.name);
    } catch (err) {
      this.deps.logger.warn({ err: (err as Error).message }, 'terminating namespaces could not be listed');
    }
  }

  private async purge(key: string): Promise<void> {
    const [tenant, name] = key.split('\u0000');
    const outcome = await this.deps.deleter.purgeNamespace(tenant, name);
    if (outcome !== 'waiting') this.waiting.delete(key);
  }
}
