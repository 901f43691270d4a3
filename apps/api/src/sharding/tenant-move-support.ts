import { Counter, Histogram, type Registry } from 'prom-client';
import { DEFAULT_SHARD } from '@plinth/storage';
import { isPlainObject, rfc3339Now } from '@plinth/apimachinery';
import type { TenantCondition, TenantObject } from '../kinds/tenant/tenant-api.js';

/** A move that must end before its switch (the tenant is being deleted, or this replica stopped leading). */
export class MoveInterrupted extends Error {
  constructor(
    message: string,
    /** Leadership lost: leave the move to the next leader instead of rolling it back. */
    readonly handOver: boolean,
  ) {
    super(message);
  }
}

/** Where the Tenant lives (`from`) and where its spec asks it to live (`to`). */
export function shardsOf(t: TenantObject): { from: string; to: string | undefined } {
  const to = isPlainObject(t.spec) && typeof t.spec.shard === 'string' && t.spec.shard ? t.spec.shard : undefined;
  return { from: t.status?.shard || DEFAULT_SHARD, to };
}

/** A metav1.Condition of `type`, keeping its transition time when its status is unchanged. */
export function condition(t: TenantObject, type: string, status: TenantCondition['status'], reason: string, message: string): TenantCondition {
  const old = t.status?.conditions?.find((c) => c.type === type);
  return { type, status, reason, message, lastTransitionTime: old && old.status === status ? old.lastTransitionTime : rfc3339Now(), observedGeneration: t.metadata.generation };
}

/** The Tenant's conditions with `set` replacing those of their types. */
export function withConditions(t: TenantObject, ...set: TenantCondition[]): TenantCondition[] {
  const types = new Set(set.map((c) => c.type));
  return [...(t.status?.conditions ?? []).filter((c) => !types.has(c.type)), ...set];
}

/** The `plinth_tenant_move_*` metrics. */
export class MoveMetrics {
  readonly moves: Counter<'result'>;
  readonly duration: Histogram<string>;
  readonly fence: Histogram<string>;
  readonly copied: Counter<'kind'>;

  constructor(registry: Registry) {
    this.moves = new Counter({
      name: 'plinth_tenant_move_total',
      help: 'Tenant moves between shards, by result (moved, rolled_back, cancelled: the tenant was deleted; superseded: a newer mover took it over; handed_over: leadership lost).',
      labelNames: ['result'] as const,
      registers: [registry],
    });
    this.duration = new Histogram({ name: 'plinth_tenant_move_duration_seconds', help: 'Time from the start of a tenant move to its switch.', buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300], registers: [registry] });
    this.fence = new Histogram({ name: 'plinth_tenant_move_fence_seconds', help: 'Time a moving tenant\'s writes were fenced (waiting) before the switch.', buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5], registers: [registry] });
    this.copied = new Counter({ name: 'plinth_tenant_move_copied_rows_total', help: 'Rows copied by tenant moves, by kind (objects, changes).', labelNames: ['kind'] as const, registers: [registry] });
  }
}

/** The generation a Tenant's status names for its move (undefined: none yet). */
export function generationOf(t: TenantObject): number | undefined {
  const g = (t.status as { moveGeneration?: unknown } | undefined)?.moveGeneration;
  return typeof g === 'string' && /^\d+$/.test(g) ? Number(g) : undefined;
}
