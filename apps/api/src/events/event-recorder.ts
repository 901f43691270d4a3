import type { KubeObject } from '@plinth/apimachinery';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import type { WriteContext } from '../resource-store/write-context.js';

/** The object an event is about (a v1 ObjectReference). */
export interface InvolvedObject {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  uid?: string;
}

/** One event to record. */
export interface EventRecord {
  tenant: string;
  involved: InvolvedObject;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** `<name>.<hex nanoseconds>`, as client-go's recorder names events. */
function eventName(name: string, ms: number): string {
  const nanos = BigInt(ms) * 1_000_000n + (process.hrtime.bigint() % 1_000_000n);
  return `${name}.${nanos.toString(16)}`;
}

/**
 * Records core/v1 Events for a controller, as client-go's legacy recorder
 * writes them (one Event per call, count 1, in the involved object's
 * namespace or `default` for cluster-scoped objects, source and
 * reportingComponent the controller's name). Best effort: a failure (a
 * Terminating namespace, a tenant being deleted) is returned as false,
 * never thrown.
 */
export class EventRecorder {
  constructor(
    private readonly deps: { store: ResourceStoreService; registry: ResourceRegistry },
    private readonly component: string,
  ) {}

  /** Stores one Event; resolves with whether it was stored. */
  async record(e: EventRecord): Promise<boolean> {
    const def = this.deps.registry.lookup(e.tenant, '', 'v1', 'events');
    if (!def) return false;
    const now = Date.now();
    const namespace = e.involved.namespace || 'default';
    const ctx: WriteContext = {
      tenant: e.tenant,
      def,
      namespace,
      subresource: '',
      user: { username: `system:serviceaccount:kube-system:${this.component.replace(/-controller$/, '')}`, groups: ['system:masters', 'system:authenticated'] },
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
      warnings: [],
    };
    const event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: eventName(e.involved.name, now), namespace },
      involvedObject: e.involved,
      reason: e.reason,
      message: e.message,
      source: { component: this.component },
      firstTimestamp: rfc3339(now),
      lastTimestamp: rfc3339(now),
      count: 1,
      type: e.type,
      reportingComponent: this.component,
      reportingInstance: '',
    } as KubeObject;
    try {
      await this.deps.store.create(ctx, event);
      return true;
    } catch {
      return false;
    }
  }
}
