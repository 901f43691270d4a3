import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { Counter } from 'prom-client';
import { ApiError, type FieldError, fieldErrors } from '@plinth/apimachinery';
import {
  CEL_MAX_EVALUATION_MS,
  TenantWorkerPool,
  WorkerCrashedError,
  WorkerPoolBusyError,
  WorkerTaskTimeoutError,
} from '@plinth/cel';
import { TenantValidationBudget } from '../admission/validation-budget.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Metrics } from '../observability/metrics.js';
import { LOGGER } from '../observability/logger.js';
import type { CelRulesJob } from '../registry/resource-definition.js';
import type { CrdRulesAnswer, CrdRulesTask } from './crd-rules.protocol.js';

/**
 * The longest one object's rules may hold a worker before the worker is
 * terminated. Evaluation stops itself at CEL_MAX_EVALUATION_MS; this bound
 * is for what no meter sees (a stuck library call), and leaves room for a
 * fresh worker compiling a schema on a loaded machine (over 2 s seen at
 * load 16 on 2 cores).
 */
export const CEL_WORKER_TASK_TIMEOUT_MS = 10_000;
/** Objects of one tenant that may wait for a CEL worker; one more gets 429. */
export const CEL_WORKER_QUEUE_PER_TENANT = 16;

/** Upstream's text when an object's rules ran out of cost budget (also what a terminated worker's object gets). */
const OUT_OF_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run';

/**
 * Custom resources' CEL validation rules (x-kubernetes-validations),
 * evaluated off the event loop on a bounded pool of worker threads
 * (`PLINTH_CEL_WORKERS`, default 2), so a rule that runs to its cost limit
 * holds a worker, not the server. Fair between tenants: a tenant runs on at
 * most half of the workers and has at most CEL_WORKER_QUEUE_PER_TENANT
 * objects waiting (beyond: 429 with Retry-After, as when its validation
 * share is spent); the time a worker spends is charged to the tenant's
 * validation share. A worker still busy after CEL_WORKER_TASK_TIMEOUT_MS is
 * terminated and replaced; the object gets upstream's out-of-budget error
 * (422). Workers start on first use.
 */
@Injectable()
export class CelRuleWorkers implements OnApplicationShutdown {
  private readonly pool: TenantWorkerPool<CrdRulesTask, CrdRulesAnswer>;
  private readonly replacements: Counter<'reason'>;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly budget: TenantValidationBudget,
    @Inject(LOGGER) private readonly logger: Logger,
    metrics: Metrics,
  ) {
    this.replacements = new Counter({
      name: 'plinth_cel_worker_replacements_total',
      help: 'CEL worker threads terminated and replaced, by reason (timeout: an evaluation outlived its bound; crash).',
      labelNames: ['reason'] as const,
      registers: [metrics.registry],
    });
    this.pool = new TenantWorkerPool({
      script: new URL('./crd-rules.worker.js', import.meta.url),
      size: config.celWorkers,
      maxQueuedPerTenant: CEL_WORKER_QUEUE_PER_TENANT,
      taskTimeoutMs: CEL_WORKER_TASK_TIMEOUT_MS,
      resourceLimits: { maxOldGenerationSizeMb: 256 },
      onReplaced: (reason, detail) => {
        this.replacements.inc({ reason });
        this.logger.warn({ reason, detail }, 'CEL worker replaced');
      },
    });
  }

  /** The rule violations of `job.obj`, evaluated on a worker for `tenant`. Throws ApiError 429 when the tenant has too many waiting. */
  async validate(tenant: string, job: CelRulesJob): Promise<FieldError[]> {
    let answer: CrdRulesAnswer;
    try {
      answer = await this.pool.run(tenant, { key: job.key, obj: job.obj, old: job.old });
      if ('missing' in answer) answer = await this.pool.run(tenant, { key: job.key, schema: job.schema, obj: job.obj, old: job.old });
    } catch (err) {
      return this.failed(tenant, job, err);
    }
    if ('missing' in answer) throw new Error('a CEL worker did not take the schema it was sent');
    this.budget.charge(tenant, answer.ms);
    return answer.errs;
  }

  /** The pool's counters (tests). */
  stats(): ReturnType<TenantWorkerPool<CrdRulesTask, CrdRulesAnswer>['stats']> {
    return this.pool.stats();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool.close();
  }

  private failed(tenant: string, job: CelRulesJob, err: unknown): FieldError[] {
    if (err instanceof WorkerPoolBusyError) {
      throw new ApiError(
        429,
        'TooManyRequests',
        'Too many requests, please try again later: too many validations of this tenant are waiting (expensive validation rules)',
        { retryAfterSeconds: 1 },
        { 'Retry-After': '1' },
      );
    }
    if (err instanceof WorkerTaskTimeoutError || (err instanceof WorkerCrashedError && !/pool is closed/.test(err.message))) {
      // The evaluation outlived every bound (or took its worker down): the object ran out of budget.
      this.budget.charge(tenant, err instanceof WorkerTaskTimeoutError ? err.ms : CEL_MAX_EVALUATION_MS);
      return [fieldErrors.invalid('<nil>', job.schema.type ?? '', OUT_OF_BUDGET)];
    }
    if (err instanceof WorkerCrashedError) throw ApiError.serviceUnavailable('the server is shutting down');
    throw err;
  }
}
