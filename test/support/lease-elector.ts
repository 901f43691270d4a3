import { type CoordinationV1Api, type V1Lease } from '@kubernetes/client-node';

/** Timings of {@link LeaseElector}, as client-go's LeaderElectionConfig. */
export interface ElectorTimings {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

function isNotFound(err: unknown): boolean {
  return (err as { code?: number }).code === 404;
}

function isConflict(err: unknown): boolean {
  const code = (err as { code?: number }).code;
  return code === 409;
}

/**
 * Leader election over a coordination.k8s.io/v1 Lease with
 * @kubernetes/client-node's typed CoordinationV1Api, following client-go's
 * leaderelection/resourcelock LeaseLock: create the Lease when missing;
 * take it over only when the record we last observed has not changed for
 * leaseDuration; renew every retryPeriod with an optimistic update
 * (resourceVersion), and step down when renewing fails for renewDeadline.
 */
export class LeaseElector {
  leading = false;
  private stopped = false;
  private observed: { record: string; at: number } | undefined;
  private lastRenew = 0;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly api: CoordinationV1Api,
    readonly identity: string,
    private readonly lock: { namespace: string; name: string },
    private readonly t: ElectorTimings,
  ) {}

  /** Starts campaigning (and renewing once leading) until {@link stop}. */
  start(): void {
    this.loop ??= this.run();
  }

  /** Stops at once without releasing the lease, as a killed process would. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.leading = false;
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const ok = await this.tryAcquireOrRenew().catch(() => false);
      if (ok) {
        this.leading = true;
        this.lastRenew = Date.now();
      } else if (this.leading && Date.now() - this.lastRenew > this.t.renewDeadlineMs) {
        this.leading = false;
      }
      await new Promise((r) => setTimeout(r, this.t.retryPeriodMs));
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = new Date();
    const { namespace, name } = this.lock;
    let current: V1Lease;
    try {
      current = await this.api.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await this.api.createNamespacedLease({
        namespace,
        body: {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace },
          spec: { holderIdentity: this.identity, leaseDurationSeconds: Math.ceil(this.t.leaseDurationMs / 1000), acquireTime: now, renewTime: now, leaseTransitions: 0 },
        },
      });
      return true;
    }
    const spec = current.spec ?? {};
    const record = JSON.stringify([spec.holderIdentity, spec.renewTime, spec.acquireTime, spec.leaseTransitions]);
    if (this.observed?.record !== record) this.observed = { record, at: Date.now() };
    const heldByOther = !!spec.holderIdentity && spec.holderIdentity !== this.identity;
    if (heldByOther && this.observed.at + this.t.leaseDurationMs > Date.now()) return false;
    const takingOver = spec.holderIdentity !== this.identity;
    const body: V1Lease = {
      ...current,
      spec: {
        ...spec,
        holderIdentity: this.identity,
        leaseDurationSeconds: Math.ceil(this.t.leaseDurationMs / 1000),
        renewTime: now,
        acquireTime: takingOver ? now : spec.acquireTime,
        leaseTransitions: (spec.leaseTransitions ?? 0) + (takingOver ? 1 : 0),
      },
    };
    try {
      await this.api.replaceNamespacedLease({ name, namespace, body });
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      throw err;
    }
  }
}
