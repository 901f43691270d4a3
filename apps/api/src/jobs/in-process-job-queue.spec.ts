import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Logger } from 'pino';
import type { JobHandlers } from './job-handlers.js';
import { InProcessJobQueue } from './in-process-job-queue.js';
import { JobName } from './job-names.js';

describe('InProcessJobQueue', () => {
  it('runs a job added while one of its name is running after it, with its own payload, one at a time', async () => {
    const seen: string[] = [];
    let inFlight = 0;
    let lastDone!: () => void;
    const last = new Promise<void>((r) => (lastDone = r));
    const handlers = {
      run: async (_name: JobName, payload: { tenant: string }) => {
        inFlight++;
        seen.push(`${payload.tenant}:${inFlight}`);
        await new Promise((r) => setImmediate(r));
        inFlight--;
        if (payload.tenant === 'initech') lastDone();
      },
    } as unknown as JobHandlers;
    const queue = new InProcessJobQueue(handlers, { warn: () => undefined } as unknown as Logger);
    await queue.add(JobName.MigrateCrdStorage, { tenant: 'acme' });
    await queue.add(JobName.MigrateCrdStorage, { tenant: 'globex' });
    await queue.add(JobName.MigrateCrdStorage, { tenant: 'initech' });
    await last;
    await queue.close();
    assert.deepEqual(seen, ['acme:1', 'globex:1', 'initech:1']);
  });

  it('runs scheduled jobs only while it leads when elected (one of several workers), at once when it starts leading', async () => {
    const runs: string[] = [];
    const handlers = { run: async (name: JobName) => void runs.push(name) } as unknown as JobHandlers;
    const queue = new InProcessJobQueue(handlers, { warn: () => undefined } as unknown as Logger, { elected: true });
    await queue.every(JobName.CompactHistory, 5, {});
    await new Promise((r) => setTimeout(r, 30));
    assert.deepEqual(runs, [], 'a worker that does not lead runs no scheduled job');
    await queue.lead();
    await queue.unlead();
    assert.ok(runs.length >= 1, 'leading runs the schedule at once');
    const after = runs.length;
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(runs.length, after, 'no run after it stopped leading');
    await queue.close();
  });

  it('runs scheduled jobs at once when not elected (a process serving alone)', async () => {
    const runs: string[] = [];
    const handlers = { run: async (name: JobName) => void runs.push(name) } as unknown as JobHandlers;
    const queue = new InProcessJobQueue(handlers, { warn: () => undefined } as unknown as Logger);
    await queue.every(JobName.CompactHistory, 60_000, {});
    await queue.close();
    assert.deepEqual(runs, [JobName.CompactHistory]);
  });
});
