import type { Logger } from 'pino';
import { type InformerScope, type InformerSource, SharedInformer } from './shared-informer.js';

/**
 * client-go's SharedInformerFactory: one {@link SharedInformer} per scope
 * (tenant or every tenant, storage resource, name filter), however many
 * controllers ask for it, so they share one list and one cache. An
 * informer runs while at least one controller holds it (see
 * SharedInformer.acquire), which in cluster mode is on the replica that
 * leads those controllers only.
 */
export class SharedInformerFactory {
  private readonly informers = new Map<string, SharedInformer>();

  constructor(
    private readonly source: InformerSource,
    private readonly logger: Logger,
  ) {}

  /** The informer of `scope` (made on first request, the same object afterwards). */
  informerFor(scope: InformerScope): SharedInformer {
    const id = `${scope.tenant ?? '*'}\u0000${scope.resource}\u0000${scope.name ?? ''}`;
    let informer = this.informers.get(id);
    if (!informer) this.informers.set(id, (informer = new SharedInformer(scope, this.source, this.logger)));
    return informer;
  }

  /** Every informer made so far. */
  all(): SharedInformer[] {
    return [...this.informers.values()];
  }
}
