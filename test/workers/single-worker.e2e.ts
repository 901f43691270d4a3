import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { eventually } from '../support/eventually.js';
import { isAlive, leaders, WorkersProcess } from './support/workers-process.js';

describe('PLINTH_WORKERS=1: one process, as before', { timeout: 180_000 }, () => {
  let server: WorkersProcess;
  after(async () => server?.kill());

  it('forks no worker: the process started serves, runs every controller itself, and stops PostgreSQL on SIGTERM', async () => {
    server = await WorkersProcess.start(1);
    // Controllers start once the post-start hooks ran: a scrape may come before.
    const only = await eventually(async () => {
      const s = await server.scrape();
      return s !== undefined && leaders(s.text).get('garbage-collector') === 1 && s;
    }, { timeoutMs: 30_000, message: 'the controllers running' });
    assert.doesNotMatch(only.text, /^plinth_worker_info/m);
    const led = leaders(only.text);
    assert.ok([...led.values()].every((v) => v === 1), 'every controller runs in the one process');
    assert.equal(led.has('scheduled-jobs'), false, 'no election for the scheduled jobs of a process serving alone');
    const postmaster = server.postmasterPid();
    server.proc.kill('SIGTERM');
    assert.equal(await server.exited, 0, server.output);
    assert.equal(isAlive(postmaster!), false);
  });
});
