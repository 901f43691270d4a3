import type { Logger } from 'pino';
import type { KubeObject } from '@plinth/apimachinery';
import { ALL_RESOURCES, type CachedChange } from '@plinth/storage';
import type { ControllerManager } from '../controllers/controller-manager.js';
import { InformerController, type KeySource, onChanges, onInformer } from '../controllers/informer-controller.js';
import type { FollowResource, InformerEvent, SharedInformer } from '../controllers/shared-informer.js';
import type { NamespaceDeleter } from './namespace-deleter.js';

/** How often the controller looks again at every Terminating namespace (its informer's resync period). */
export const NAMESPACE_SWEEP_INTERVAL_MS = 5000;

/** What the namespace controller needs. */
export interface NamespaceDeletionDeps {
  deleter: NamespaceDeleter;
  /** Namespaces of every tenant (the shared informer). */
  namespaces: SharedInformer;
  /** The change feed of every resource (an object leaving a namespace the controller waits on), uncached. */
  follow: FollowResource;
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
 * ControllerManager (one replica runs it): it reads namespaces from the
 * shared informer (a namespace entering deletion; every Terminating one
 * again each resync period and when it starts), follows the change feed
 * for objects removed from a namespace it waits on, and works on one
 * namespace at a time.
 */
export class NamespaceDeletionController extends InformerController {
  /** Namespaces seen Terminating and not yet gone: an object leaving one brings it back. */
  private readonly waiting = new Set<string>();

  constructor(private readonly deps: NamespaceDeletionDeps) {
    super({ name: 'namespace-controller', workers: 1, queues: deps.queues });
  }

  /** Queues `name` of `tenant` to be emptied and removed (ignored unless this replica runs the controller). */
  readonly enqueueNamespace = (tenant: string, name: string): void => {
    if (!this.queue.active) return;
    this.waiting.add(keyOf(tenant, name));
    this.queue.add(keyOf(tenant, name));
  };

  protected sources(): KeySource[] {
    return [
      onInformer(this.deps.namespaces, (e) => this.terminating(e), NAMESPACE_SWEEP_INTERVAL_MS),
      onChanges(this.deps.follow, ALL_RESOURCES, (c) => this.emptied(c)),
    ];
  }

  /** A namespace entering deletion, or met again Terminating. */
  private terminating(e: InformerEvent): undefined {
    if (e.type !== 'delete' && (e.object.body as KubeObject).metadata?.deletionTimestamp) this.enqueueNamespace(e.object.key.tenant, e.object.key.name);
    return undefined;
  }

  /** An object removed from a namespace the controller waits on. */
  private emptied(c: CachedChange): string | undefined {
    if (c.type !== 'DELETED' || !c.key.namespace) return undefined;
    const key = keyOf(c.key.tenant, c.key.namespace);
    return this.waiting.has(key) ? key : undefined;
  }

  /** Stops and waits for the namespace in progress. */
  override async stop(): Promise<void> {
    await super.stop();
    this.waiting.clear();
  }

  protected async reconcile(key: string): Promise<void> {
    const [tenant, name] = key.split('\u0000');
    const outcome = await this.deps.deleter.purgeNamespace(tenant, name);
    if (outcome !== 'waiting') this.waiting.delete(key);
  }
}
