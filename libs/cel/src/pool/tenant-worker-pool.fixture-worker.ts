import { serveTasks } from './serve-tasks.js';

/**
 * The worker of tenant-worker-pool.spec.ts: `echo` answers its value,
 * `sleep` answers after `ms`, `spin` never returns (a stuck evaluation),
 * `exit` ends the thread (a crash), `throw` fails with a TypeError.
 */
type FixtureTask = { op: 'echo'; value: unknown } | { op: 'sleep'; ms: number; value?: unknown } | { op: 'spin' } | { op: 'exit' } | { op: 'throw' };

serveTasks(async (t: FixtureTask) => {
  switch (t.op) {
    case 'echo':
      return t.value;
    case 'sleep':
      await new Promise((r) => setTimeout(r, t.ms));
      return t.value;
    case 'spin':
      for (;;) {
        // A loop no deadline inside the worker can end.
      }
    case 'exit':
      process.exit(3);
      break;
    case 'throw':
      throw new TypeError('bad task');
  }
  return undefined;
});
