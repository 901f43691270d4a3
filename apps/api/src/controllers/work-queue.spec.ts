import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { ControllerMetrics } from './controller-metrics.js';
import { WorkQueue } from './work-queue.js';

const tick = (ms = 5) => new Promise((r) => setTimeout(r, ms));

async function value(registry: Registry, metric: string): Promise<number> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === metric);
  return (m?.values as { value: number }[] | undefined)?.reduce((a, v) => a + v.value, 0) ?? NaN;
}

function queue(process: (key: string) => Promise<void>, workers = 2) {
  const registry = new Registry();
  const q = new WorkQueue({ name: 'test', process, workers, metrics: new ControllerMetrics(registry), logger: pino({ level: 'silent' }), baseBackoffMs: 5 });
  return { q, registry };
}

describe('WorkQueue', () => {
  it('ignores adds until started and after shutdown', async () => {
    const seen: string[] = [];
    const { q } = queue(async (k) => void seen.push(k));
    q.add('a');
    q.start();
    q.add('b');
    await tick();
    await q.shutDown();
    q.add('c');
    await tick();
    assert.deepEqual(seen, ['b']);
  });

  it('queues a waiting key once, and a key added while it is processed once more after, never on two workers at once', async () => {
    const runs: string[] = [];
    let running = 0;
    let maxRunning = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { q } = queue(async (k) => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      runs.push(k);
      if (runs.length === 1) await gate;
      running--;
    }, 4);
    q.start();
    q.add('k');
    await tick();
    q.add('k');
    q.add('k');
    assert.equal(q.depth, 0, 'a key being processed is not waiting');
    release();
    await tick(20);
    assert.deepEqual(runs, ['k', 'k']);
    assert.equal(maxRunning, 1);
    await q.shutDown();
  });

  it('retries a failing key with backoff and counts failures and retries', async () => {
    let attempts = 0;
    const { q, registry } = queue(async () => {
      attempts++;
      if (attempts < 3) throw new Error('not yet');
    });
    q.start();
    q.add('x');
    for (let i = 0; i < 100 && attempts < 3; i++) await tick();
    assert.equal(attempts, 3);
    assert.equal(await value(registry, 'plinth_workqueue_failures_total'), 2);
    assert.equal(await value(registry, 'plinth_workqueue_retries_total'), 2);
    await q.shutDown();
  });
});
