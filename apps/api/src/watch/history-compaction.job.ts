import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { JobName } from '../jobs/job-names.js';
import { JOB_QUEUE, type JobQueue } from '../jobs/job-queue.js';
import { OnJob } from '../jobs/on-job.decorator.js';
import { WatchService } from './watch.service.js';

/**
 * History compaction as a job: scheduled every
 * PLINTH_COMPACTION_INTERVAL_SECONDS once the application has started (one
 * schedule for the whole cluster in cluster mode), each run deleting the
 * change log older than the retention.
 */
@Injectable()
export class HistoryCompactionJob implements OnApplicationBootstrap {
  constructor(
    @Inject(WatchService) private readonly watch: WatchService,
    @Inject(JOB_QUEUE) private readonly jobs: JobQueue,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.jobs.every(JobName.CompactHistory, this.config.compactionIntervalSeconds * 1000, {});
  }

  /** One run: returns how many change-log entries were deleted. */
  @OnJob(JobName.CompactHistory)
  async compact(): Promise<{ deleted: number }> {
    return { deleted: await this.watch.pipeline.compaction.runOnce() };
  }
}
