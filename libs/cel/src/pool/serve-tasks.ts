import { parentPort } from 'node:worker_threads';

/**
 * The worker side of {@link TenantWorkerPool}: answers each task the pool
 * posts with `handler`'s result (awaited), or with the error it threw
 * (its class name and message). Call once, at the top level of the
 * worker's module, after everything the handler needs is loaded: the pool
 * sends tasks only once the worker said it is ready.
 */
export function serveTasks<In, Out>(handler: (payload: In) => Out | Promise<Out>): void {
  const port = parentPort;
  if (!port) throw new Error('serveTasks must run in a worker thread');
  port.on('message', async (m: { seq: number; payload: In }) => {
    try {
      const value = await handler(m.payload);
      port.postMessage({ seq: m.seq, ok: true, value });
    } catch (err) {
      const e = err as { name?: string; message?: string };
      port.postMessage({ seq: m.seq, ok: false, name: e?.constructor?.name ?? e?.name ?? 'Error', message: e?.message ?? String(err) });
    }
  });
  port.postMessage({ ready: true });
}
