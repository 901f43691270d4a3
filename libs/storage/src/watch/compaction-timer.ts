import type { CompactionService } from './compaction.service.js';
import type { PipelineLogger } from './pipeline-logger.js';

/** Runs compaction on a schedule; see {@link CompactionTimer} and CompactionQueue. */
export interface CompactionScheduler {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Single-node compaction: an in-process timer, first run right at start.
 * A run that fails is logged and retried at the next tick.
 */
export class CompactionTimer implements CompactionScheduler {
  private timer: NodeJS.Timeout | undefined;
  private last: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly service: CompactionService,
    private readonly intervalMs: number,
    private readonly logger: PipelineLogger,
  ) {}

  /** Schedules the runs. */
  async start(): Promise<void> {
    const run = () => {
      this.last = this.service.runOnce().catch((err) => this.logger.warn({ err: (err as Error).message }, 'watch history compaction failed'));
    };
    run();
    this.timer = setInterval(run, this.intervalMs);
    this.timer.unref();
  }

  /** Stops scheduling and waits for a run in progress. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.last;
  }
}
