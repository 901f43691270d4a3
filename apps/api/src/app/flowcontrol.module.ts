import { Inject, Module, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { type Storage, STORAGE } from '@plinth/storage';
import { AdmissionChainModule } from './admission-chain.module.js';
import { TenantValidationBudget } from '../admission/validation-budget.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Metrics } from '../observability/metrics.js';
import { OBSERVE_CHANGES, type ObserveChanges } from '../watch/observe-changes.js';
import { AdaptiveLimit, CONTENDED_LATENESS_SHARE, DELAY_RESOLUTION_MS, EventLoopLimiter } from '../flowcontrol/adaptive-concurrency.js';
import { FairQueuing, type FlowObserver } from '../flowcontrol/fair-queuing.js';
import { adaptiveMetrics, flowMetrics } from '../flowcontrol/flow-metrics.js';
import { TenantFlowLimits } from '../flowcontrol/tenant-flow-limits.js';
import { ThrottledWrites } from '../flowcontrol/throttled-writes.js';
import { WorkEstimator } from '../flowcontrol/work-estimator.js';

/** The fair-queuing metrics, shared by the seat queues and the validation-share hold. */
const FLOW_OBSERVER = Symbol('FLOW_OBSERVER');

/**
 * Per-tenant fair queuing of requests (after API Priority and Fairness):
 * each tenant's limits from its Tenant object (followed through the change
 * stream, loaded when the module starts), seats by estimated work, queues
 * and 429s, and writes held before their body (or refused) while their
 * tenant's share of validation time is used up; the replica-wide seat
 * limit adapts to the event loop's delay (adaptive concurrency).
 */
@Module({
  imports: [AdmissionChainModule],
  providers: [
    {
      provide: TenantFlowLimits,
      useFactory: (config: AppConfig, lists: Storage, observe: ObserveChanges) =>
        new TenantFlowLimits({ concurrency: config.tenantConcurrentRequests, queueLength: config.tenantQueueLength }, lists, observe),
      inject: [APP_CONFIG, STORAGE, OBSERVE_CHANGES],
    },
    { provide: FLOW_OBSERVER, useFactory: (metrics: Metrics) => flowMetrics(metrics.registry), inject: [Metrics] },
    {
      provide: FairQueuing,
      useFactory: (config: AppConfig, limits: TenantFlowLimits, observer: FlowObserver) =>
        new FairQueuing((t) => limits.limitsOf(t), config.tenantQueueWaitMs, observer, config.maxRequestsInflight),
      inject: [APP_CONFIG, TenantFlowLimits, FLOW_OBSERVER],
    },
    {
      provide: EventLoopLimiter,
      useFactory: (config: AppConfig, queuing: FairQueuing, metrics: Metrics) => {
        const report = adaptiveMetrics(metrics.registry);
        const max = config.maxRequestsInflight;
        report(max, 0, 0);
        const { enabled, minSeats, targetDelayMs, targetUtilization } = config.adaptiveConcurrency;
        // No replica-wide limit (0) or adaptation off: the limit stays fixed; the loop's delay is still reported.
        const min = Math.min(minSeats, max);
        // While tenants compete: a fifth of the lateness above the monitor's resolution, down to half the floor.
        const contended = { contendedTargetDelayMs: DELAY_RESOLUTION_MS + Math.max(0, targetDelayMs - DELAY_RESOLUTION_MS) * CONTENDED_LATENESS_SHARE, contendedMin: Math.max(1, Math.ceil(min / 2)) };
        const controller = enabled && max > 0 ? new AdaptiveLimit({ min, max, targetDelayMs, targetUtilization, ...contended }) : undefined;
        return new EventLoopLimiter(controller, queuing, report);
      },
      inject: [APP_CONFIG, FairQueuing, Metrics],
    },
    { provide: WorkEstimator, useFactory: () => new WorkEstimator() },
    {
      provide: ThrottledWrites,
      useFactory: (config: AppConfig, budget: TenantValidationBudget, observer: FlowObserver) =>
        new ThrottledWrites(budget, { queueLength: config.tenantQueueLength, waitMs: config.tenantQueueWaitMs }, (t, n) => observer.held?.(t, n)),
      inject: [APP_CONFIG, TenantValidationBudget, FLOW_OBSERVER],
    },
  ],
  exports: [FairQueuing, TenantFlowLimits, WorkEstimator, ThrottledWrites],
})
export class FlowControlModule implements OnModuleInit, OnModuleDestroy {
  constructor(
    @Inject(TenantFlowLimits) private readonly limits: TenantFlowLimits,
    @Inject(EventLoopLimiter) private readonly limiter: EventLoopLimiter,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.limits.load();
    this.limiter.start();
  }

  onModuleDestroy(): void {
    this.limiter.stop();
  }
}
