import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { FlowObserver } from './fair-queuing.js';

/** Tenants that get their own label values; the rest share `_other`, so /metrics stays bounded with any number of tenants. */
const MAX_LABELLED_TENANTS = 100;

/**
 * The adaptive replica-wide seat limit and the event loop delay and
 * utilization it reacts to (replica-wide gauges, no labels); returns what
 * records them.
 */
export function adaptiveMetrics(registry: Registry): (limit: number, delayMs: number, utilization: number) => void {
  const limit = new Gauge({ name: 'plinth_flowcontrol_adaptive_limit', help: 'Replica-wide seats executing requests may occupy now (adaptive concurrency; PLINTH_MAX_REQUESTS_INFLIGHT when off).', registers: [registry] });
  const delay = new Gauge({ name: 'plinth_flowcontrol_event_loop_delay_seconds', help: 'Mean event loop delay over the last adaptive-concurrency window.', registers: [registry] });
  const busy = new Gauge({ name: 'plinth_flowcontrol_event_loop_utilization', help: 'Share of the last adaptive-concurrency window the event loop was busy (0 to 1).', registers: [registry] });
  return (n, ms, u) => {
    limit.set(n);
    delay.set(ms / 1000);
    busy.set(u);
  };
}

/** Fair-queuing metrics per tenant (in flight, queued, rejected, wait), as upstream's apiserver_flowcontrol_* per priority level. */
export function flowMetrics(registry: Registry): FlowObserver {
  const inflight = new Gauge({ name: 'plinth_flowcontrol_current_inflight_requests', help: 'Requests executing, per tenant (first 100 tenants; the rest as _other).', labelNames: ['tenant'] as const, registers: [registry] });
  const seats = new Gauge({ name: 'plinth_flowcontrol_current_executing_seats', help: 'Seats occupied by executing requests (1 to 10 each, by estimated work), per tenant.', labelNames: ['tenant'] as const, registers: [registry] });
  const queued = new Gauge({ name: 'plinth_flowcontrol_current_inqueue_requests', help: 'Requests waiting for a seat, per tenant.', labelNames: ['tenant'] as const, registers: [registry] });
  const held = new Gauge({ name: 'plinth_flowcontrol_current_held_writes', help: 'Writes held, body unread, until their tenant\'s share of validation time refills, per tenant.', labelNames: ['tenant'] as const, registers: [registry] });
  const rejected = new Counter({ name: 'plinth_flowcontrol_rejected_requests_total', help: 'Requests refused with 429, per tenant and reason (queue-full, timeout, rate, validation-share).', labelNames: ['tenant', 'reason'] as const, registers: [registry] });
  const wait = new Histogram({
    name: 'plinth_flowcontrol_request_wait_duration_seconds',
    help: 'Time requests waited for a seat, per tenant.',
    labelNames: ['tenant'] as const,
    buckets: [0, 0.001, 0.005, 0.025, 0.1, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const work = new Counter({ name: 'plinth_flowcontrol_work_seats_total', help: 'Seats of work tenants were charged for finished requests (bytes moved, label index entries written), per tenant: what advanced their virtual time.', labelNames: ['tenant'] as const, registers: [registry] });
  const labelled = new Set<string>();
  const label = (tenant: string) => {
    if (labelled.has(tenant)) return tenant;
    if (labelled.size < MAX_LABELLED_TENANTS) {
      labelled.add(tenant);
      return tenant;
    }
    return '_other';
  };
  return {
    admitted: (tenant, seconds) => wait.observe({ tenant: label(tenant) }, seconds),
    rejected: (tenant, reason) => rejected.inc({ tenant: label(tenant), reason }),
    charged: (tenant, seats) => work.inc({ tenant: label(tenant) }, seats),
    held: (tenant, n) => {
      const t = label(tenant);
      if (t !== '_other') held.set({ tenant: t }, n);
    },
    changed: (tenant, nIn, nQueued, nSeats) => {
      const t = label(tenant);
      // Tenants folded into _other would overwrite one another's gauges: only labelled tenants report them.
      if (t === '_other') return;
      inflight.set({ tenant: t }, nIn);
      queued.set({ tenant: t }, nQueued);
      seats.set({ tenant: t }, nSeats);
    },
  };
}
