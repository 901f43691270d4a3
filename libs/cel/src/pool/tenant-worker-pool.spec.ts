import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { TenantWorkerPool, WorkerCrashedError, WorkerPoolBusyError, WorkerTaskError, WorkerTaskTimeoutError } from './tenant-worker-pool.js';

const SCRIPT = new URL('./tenant-worker-pool.fixture-worker.js', import.meta.url);

type Task = { op: 'echo'; value: unknown } | { op: 'sleep'; ms: number; value?: unknown } | { op: 'spin' } | { op: 'exit' } | { op: 'throw' };

describe('TenantWorkerPool (real worker threads)', () => {
  let pool: TenantWorkerPool<Task, unknown> | undefined;
  afterEach(async () => pool?.close());

  it('runs tasks on worker threads and answers with their results or their errors', async () => {
    pool = new TenantWorkerPool<Task, unknown>({ script: SCRIPT, size: 2, taskTimeoutMs: 10_000 });
    assert.deepEqual(await pool.run('a', { op: 'echo', value: { x: [1, 'two'] } }), { x: [1, 'two'] });
    await assert.rejects(pool.run('a', { op: 'throw' }), (err: unknown) => err instanceof WorkerTaskError && err.errorName === 'TypeError' && err.message === 'bad task');
    assert.equal(pool.stats().completed, 2);
    assert.ok(pool.stats().workers >= 1 && pool.stats().workers <= 2);
  });

  it('gives a tenant at most its share of the workers: another tenant is served while it has many tasks waiting', async () => {
    pool = new TenantWorkerPool<Task, unknown>({ script: SCRIPT, size: 2, taskTimeoutMs: 10_000 });
    // Both workers up first, so the test is about scheduling, not start-up.
    await Promise.all([pool.run('warm1', { op: 'sleep', ms: 50 }), pool.run('warm2', { op: 'sleep', ms: 50 })]);
    const finished: string[] = [];
    const flood = Array.from({ length: 10 }, (_, i) => pool!.run('noisy', { op: 'sleep', ms: 100, value: i }).then(() => finished.push(`noisy${i}`)));
    assert.equal(pool.stats().busy, 1, 'the noisy tenant holds one worker of two');
    assert.equal(pool.stats().queued, 9);
    assert.equal(await pool.run('quiet', { op: 'echo', value: 'q' }), 'q');
    assert.ok(finished.length < 10, `the quiet tenant was answered while ${10 - finished.length} noisy tasks were pending`);
    await Promise.all(flood);
    assert.equal(finished.length, 10);
  });

  it('refuses at once what is beyond a tenant\'s queue, leaving other tenants\' room', async () => {
    pool = new TenantWorkerPool<Task, unknown>({ script: SCRIPT, size: 2, maxQueuedPerTenant: 3, taskTimeoutMs: 10_000 });
    await Promise.all([pool.run('warm1', { op: 'sleep', ms: 50 }), pool.run('warm2', { op: 'sleep', ms: 50 })]);
    // One running (its share of two workers) and three waiting.
    const accepted = Array.from({ length: 4 }, () => pool!.run('noisy', { op: 'sleep', ms: 50 }));
    await assert.rejects(pool.run('noisy', { op: 'echo', value: 1 }), (err: unknown) => err instanceof WorkerPoolBusyError && err.scope === 'tenant');
    assert.equal(await pool.run('quiet', { op: 'echo', value: 2 }), 2);
    await Promise.all(accepted);
    assert.equal(await pool.run('noisy', { op: 'echo', value: 3 }), 3, 'room again once the queue drained');
  });

  it('terminates a worker stuck past the task timeout and replaces it', async () => {
    pool = new TenantWorkerPool<Task, unknown>({ script: SCRIPT, size: 1, taskTimeoutMs: 300 });
    await pool.run('a', { op: 'echo', value: 0 });
    const [before] = pool.threadIds();
    const stuck = pool.run('a', { op: 'spin' });
    const waiting = pool.run('b', { op: 'echo', value: 'after' });
    await assert.rejects(stuck, WorkerTaskTimeoutError);
    assert.equal(await waiting, 'after', 'the task waiting behind the stuck one runs on the replacement');
    assert.equal(pool.stats().replaced, 1);
    assert.equal(await pool.run('a', { op: 'echo', value: 'again' }), 'again');
    assert.equal(pool.stats().workers, 1);
    assert.notEqual(pool.threadIds()[0], before, 'a new thread serves');
  });

  it('replaces a worker that died with its task', async () => {
    pool = new TenantWorkerPool<Task, unknown>({ script: SCRIPT, size: 1, taskTimeoutMs: 10_000 });
    await pool.run('a', { op: 'echo', value: 0 });
    const [before] = pool.threadIds();
    await assert.rejects(pool.run('a', { op: 'exit' }), WorkerCrashedError);
    assert.equal(await pool.run('a', { op: 'echo', value: 'alive' }), 'alive');
    assert.equal(pool.stats().replaced, 1);
    assert.notEqual(pool.threadIds()[0], before);
  });

  it('fails what waits when no worker can start, rather than retrying forever', async () => {
    pool = new TenantWorkerPool<Task, unknown>({ script: new URL('./no-such-worker.js', import.meta.url), size: 2, taskTimeoutMs: 10_000 });
    await assert.rejects(pool.run('a', { op: 'echo', value: 1 }), WorkerCrashedError);
  });
});
