import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
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

  /**
   * One run over every shard's change log: returns how many entries were
   * deleted. A shard that cannot be compacted now is skipped (the next run
   * tries again); the run fails only when every shard failed.
   */
  @OnJob(JobName.CompactHistory)
  async compact(): Promise<{ deleted: number }> {
    let deleted = 0;
    let failed: unknown;
    let failures = 0;
    const pipelines = [...this.watch.shardPipelines().values()];
    for (const p of pipelines) {
      try {
        deleted += await p.compaction.runOnce();
      } catch (err) {
        failed = err;
        failures++;
      }
    }
    if (failures > 0 && failures === pipelines.length) throw failed;
    return { deleted };
  }
}
