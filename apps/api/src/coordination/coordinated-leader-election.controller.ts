import type { Logger } from 'pino';
import { ApiError, type KubeObject } from '@plinth/apimachinery';
import type { ObjectListRepository, ObjectStoreRepository } from '@plinth/storage';
import type { Controller } from '../controllers/controller.js';
import type { ControllerManager } from '../controllers/controller-manager.js';
import type { WorkQueue } from '../controllers/work-queue.js';
import type { ResourceDefinition } from '../registry/resource-definition.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import type { ResourceDeleteService } from '../resource-store/resource-delete.service.js';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import type { WriteContext } from '../resource-store/write-context.js';
import type { ObserveChanges } from '../watch/observe-changes.js';
import {
  type Candidate,
  candidateExpired,
  candidateOf,
  ELECTED_LEASE_DURATION_SECONDS,
  ELECTION_DURATION_MS,
  electionNeeded,
  electionStep,
  leaseExpired,
  leaseStateOf,
} from '../kinds/coordination/coordinated-election.js';
import { LEASE_CANDIDATE_GROUP, LEASE_CANDIDATE_STORAGE_RESOURCE, LEASE_CANDIDATE_VERSION } from '../kinds/coordination/lease-candidate.schema.js';

const LEASE_STORAGE_RESOURCE = 'coordination.k8s.io/leases';
/** How often a Lease with candidates is looked at again (defaultRequeueInterval). */
const REQUEUE_MS = 5_000;
/** How often expired candidates are collected (the LeaseCandidate GC controller's period). */
const GC_INTERVAL_MS = 30 * 60_000;
const USER = { username: 'system:kube-apiserver', uid: '', groups: ['system:masters', 'system:authenticated'] };

/** What the controller works with. */
export interface CoordinatedElectionDeps {
  registry: ResourceRegistry;
  objects: ObjectStoreRepository;
  lists: ObjectListRepository;
  store: ResourceStoreService;
  deleter: ResourceDeleteService;
  tenants: () => Promise<string[]>;
  observe: ObserveChanges;
  queues: Pick<ControllerManager, 'queue'>;
  logger: Logger;
  /** The collector's period (default 30 minutes, as upstream). */
  gcIntervalMs?: number;
}

/** metav1.MicroTime of `ms`: RFC 3339 with six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

const SEP = '\u0000';
const leaseKey = (tenant: string, namespace: string, name: string) => [tenant, namespace, name].join(SEP);

/**
 * Coordinated leader election (KEP-4355), as kube-apiserver's
 * leader-election-controller and LeaseCandidate GC, per tenant, elected
 * (one replica runs it), behind the CoordinatedLeaderElection gate. For each
 * Lease named by LeaseCandidates (not expired: renewed within 30 minutes)
 * of its namespace, when an election is needed (see electionNeeded) it pings
 * the candidates (spec.pingTime), gives them 5 s to answer (renewTime after
 * pingTime), and among those that did picks by the strategy of the highest
 * binary version; for OldestEmulationVersion the lowest emulation version,
 * then binary version, then the oldest candidate. It creates the Lease
 * (holder, strategy, 5 s duration, renewTime now) or updates it: the holder
 * is replaced when the Lease has none or expired, else a better candidate
 * becomes spec.preferredHolder (the holder should step down). Candidates not
 * renewed for 30 minutes are deleted at start and every 30 minutes.
 */
export class CoordinatedLeaderElectionController implements Controller {
  readonly name = 'leader-election-controller';
  private readonly queue: WorkQueue;
  private unobserve: Array<() => void> = [];
  private gcTimer: NodeJS.Timeout | undefined;
  /** Leases that have candidates, so that Lease changes (renewals, many) wake the election only for them. */
  private readonly contested = new Set<string>();

  constructor(private readonly deps: CoordinatedElectionDeps) {
    this.queue = deps.queues.queue({ name: this.name, workers: 2, process: (key) => this.reconcile(key) });
  }

  start(): void {
    this.queue.start();
    this.unobserve = [
      this.deps.observe(LEASE_CANDIDATE_STORAGE_RESOURCE, {
        onChange: (c) => {
          const body = c.object as KubeObject | undefined;
          if (!body || c.unreadable) return;
          const cand = candidateOf(body);
          const key = leaseKey(c.key.tenant, c.key.namespace, cand.leaseName);
          this.contested.add(key);
          // A candidate's answer to a ping is awaited by the step that pinged; other changes start a step.
          if (c.type !== 'DELETED' && cand.pingTime !== undefined && cand.renewTime !== undefined && cand.renewTime < cand.pingTime) return;
          this.queue.add(key);
        },
        onReset: () => void this.resync(),
      }),
      this.deps.observe(LEASE_STORAGE_RESOURCE, {
        onChange: (c) => {
          const key = leaseKey(c.key.tenant, c.key.namespace, c.key.name);
          if (this.contested.has(key)) this.queue.add(key);
        },
        onReset: () => undefined,
      }),
    ];
    void this.resync().then(() => this.collect());
    this.gcTimer = setInterval(() => void this.collect(), this.deps.gcIntervalMs ?? GC_INTERVAL_MS);
    this.gcTimer.unref();
  }

  async stop(): Promise<void> {
    for (const u of this.unobserve) u();
    this.unobserve = [];
    if (this.gcTimer) clearInterval(this.gcTimer);
    this.gcTimer = undefined;
    await this.queue.shutDown();
  }

  private async resync(): Promise<void> {
    try {
      for (const tenant of await this.deps.tenants()) {
        for (const item of (await this.deps.lists.list({ tenant, resource: LEASE_CANDIDATE_STORAGE_RESOURCE })).items) {
          const key = leaseKey(tenant, item.key.namespace, candidateOf(item.body as KubeObject).leaseName);
          this.contested.add(key);
          this.queue.add(key);
        }
      }
    } catch (err) {
      this.deps.logger.warn({ err: (err as Error).message }, `${this.name}: candidates could not be listed`);
    }
  }

  /** Deletes the candidates of every tenant not renewed for 30 minutes (conditionally on their uid). Never rejects. */
  async collect(): Promise<void> {
    try {
      const now = Date.now();
      for (const tenant of await this.deps.tenants()) {
        const def = this.candidateDef(tenant);
        if (!def) continue;
        for (const item of (await this.deps.lists.list({ tenant, resource: LEASE_CANDIDATE_STORAGE_RESOURCE })).items) {
          const body = item.body as KubeObject;
          if (!candidateExpired(candidateOf(body), now)) continue;
          try {
            await this.deps.deleter.delete(this.ctx(tenant, def, item.key.namespace, 'DeleteOptions'), item.key.name, { uid: body.metadata.uid });
          } catch (err) {
            if (!(err instanceof ApiError && (err.code === 404 || err.code === 409))) throw err;
          }
        }
      }
    } catch (err) {
      this.deps.logger.warn({ err: (err as Error).message }, `${this.name}: expired candidates could not be collected`);
    }
  }

  private candidateDef(tenant: string): ResourceDefinition | undefined {
    return this.deps.registry.lookup(tenant, LEASE_CANDIDATE_GROUP, LEASE_CANDIDATE_VERSION, 'leasecandidates');
  }

  private ctx(tenant: string, def: ResourceDefinition, namespace: string, kind: 'CreateOptions' | 'UpdateOptions' | 'DeleteOptions'): WriteContext {
    return { tenant, def, namespace, subresource: '', user: USER, dryRun: false, options: { kind, apiVersion: 'meta.k8s.io/v1' }, warnings: [], fieldManager: 'kube-apiserver' };
  }

  /** One step of the election for one Lease; requeues itself while the Lease has candidates. */
  private async reconcile(key: string): Promise<void> {
    const [tenant, namespace, name] = key.split(SEP);
    const candidateDef = this.candidateDef(tenant);
    const leaseDef = this.deps.registry.lookup(tenant, 'coordination.k8s.io', 'v1', 'leases');
    if (!candidateDef || !leaseDef) return;
    const now = Date.now();
    const all = (await this.deps.lists.list({ tenant, resource: LEASE_CANDIDATE_STORAGE_RESOURCE, namespace })).items.map((i) => candidateOf(i.body as KubeObject));
    const candidates = admissibleCandidates(all, name, now);
    if (candidates.length === 0) {
      if (!all.some((c) => c.leaseName === name)) this.contested.delete(key);
      return;
    }
    const stored = await this.deps.objects.get({ tenant, resource: leaseDef.storageResource, namespace, name }, undefined, true);
    const lease = stored ? leaseStateOf(stored.body as KubeObject) : undefined;
    if (!electionNeeded(candidates, lease, now)) return this.queue.addAfter(key, REQUEUE_MS);
    const step = electionStep(candidates, now);
    switch (step.kind) {
      case 'ping':
        await this.ping(tenant, candidateDef, namespace, step.names, now);
        return this.queue.addAfter(key, ELECTION_DURATION_MS);
      case 'wait':
        return this.queue.addAfter(key, 1_000);
      case 'none':
        this.deps.logger.info({ tenant, namespace, lease: name }, `${this.name}: no candidate answered`);
        return this.queue.addAfter(key, REQUEUE_MS);
      case 'conflict':
        this.deps.logger.warn({ tenant, namespace, lease: name, err: step.error.message }, `${this.name}: conflicting strategies`);
        return this.queue.addAfter(key, REQUEUE_MS);
      case 'elect':
        await this.writeLease(tenant, leaseDef, namespace, name, step.strategy, step.holder);
        return this.queue.addAfter(key, REQUEUE_MS);
    }
  }

  /** Sets spec.pingTime on each named candidate (a candidate gone meanwhile is skipped). */
  private async ping(tenant: string, def: ResourceDefinition, namespace: string, names: string[], now: number): Promise<void> {
    for (const n of names) {
      try {
        await this.deps.store.update(this.ctx(tenant, def, namespace, 'UpdateOptions'), n, (o) => {
          (o.spec as Record<string, unknown>).pingTime = microTime(now);
          return o;
        });
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 404)) throw err;
      }
    }
  }

  /** Creates the Lease for the elected holder, or updates it as upstream does (see the class comment). */
  private async writeLease(tenant: string, def: ResourceDefinition, namespace: string, name: string, strategy: string, holder: string | undefined): Promise<void> {
    const ctx = this.ctx(tenant, def, namespace, 'CreateOptions');
    const now = Date.now();
    const spec: Record<string, unknown> = { strategy, leaseDurationSeconds: ELECTED_LEASE_DURATION_SECONDS, renewTime: microTime(now) };
    if (holder) spec.holderIdentity = holder;
    try {
      await this.deps.store.create(ctx, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec });
      this.deps.logger.info({ tenant, namespace, lease: name, holder }, `${this.name}: lease created`);
      return;
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 409)) throw err;
    }
    await this.deps.store.update({ ...ctx, options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' } }, name, (o) => {
      const s = (o.spec ??= {}) as Record<string, unknown>;
      const state = leaseStateOf(o);
      const current = state.holderIdentity ?? '';
      s.strategy = strategy;
      if (holder && (current === '' || (leaseExpired(state, Date.now()) && current !== holder))) {
        delete s.preferredHolder;
        delete s.acquireTime;
        s.holderIdentity = holder;
        s.renewTime = microTime(Date.now());
        s.leaseDurationSeconds = ELECTED_LEASE_DURATION_SECONDS;
        this.deps.logger.info({ tenant, namespace, lease: name, holder }, `${this.name}: lease holder set`);
      } else if (holder && holder !== current) {
        s.preferredHolder = holder;
      }
      return o;
    });
  }
}

/** Candidates of `all` contending for `leaseName` and not expired at `now`. */
export function admissibleCandidates(all: Candidate[], leaseName: string, now: number): Candidate[] {
  return all.filter((c) => c.leaseName === leaseName && !candidateExpired(c, now));
}
