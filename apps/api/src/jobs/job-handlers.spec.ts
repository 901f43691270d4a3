import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { DiscoveryModule, NestFactory } from '@nestjs/core';
import { JobHandlers } from './job-handlers.js';
import { JobName } from './job-names.js';
import { OnJob } from './on-job.decorator.js';

@Injectable()
class Compactor {
  runs: unknown[] = [];
  @OnJob(JobName.CompactHistory)
  compact(payload: unknown): string {
    this.runs.push(payload);
    return 'done';
  }
}

@Injectable()
class SecondCompactor {
  @OnJob(JobName.CompactHistory)
  compactToo(): void {}
}

@Injectable()
class Migrator {
  @OnJob(JobName.MigrateCrdStorage)
  migrate(): void {}
}

@Injectable()
class Idle {
  nothing(): void {}
}

/** A Nest application context with JobHandlers and `providers`. */
async function contextWith(providers: (new (...args: never[]) => unknown)[]) {
  @Module({ imports: [DiscoveryModule], providers: [JobHandlers, ...providers] })
  class TestModule {}
  return NestFactory.createApplicationContext(TestModule, { logger: false, abortOnError: false });
}

describe('JobHandlers', () => {
  it('finds the one @OnJob handler of each job and runs it with the payload', async () => {
    const app = await contextWith([Compactor, Migrator, Idle]);
    assert.equal(await app.get(JobHandlers).run(JobName.CompactHistory, {}), 'done');
    assert.deepEqual(app.get(Compactor).runs, [{}]);
    await app.close();
  });

  it('fails start-up when a job has two handlers, naming both', async () => {
    await assert.rejects(contextWith([Compactor, SecondCompactor]), /job history\.compact has 2 handlers: Compactor\.compact, SecondCompactor\.compactToo/);
  });

  it('fails start-up when a job has no handler', async () => {
    await assert.rejects(contextWith([Idle]), /job history\.compact has no handler/);
  });
});
