import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { timeOfName } from '../../apps/api/src/snapshots/snapshot-target.js';
import { ReplicaProcess } from '../fault/support/replica-process.js';
import { eventually } from '../support/eventually.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

const CONTROLLER = 'snapshot-scheduler';
/** Every two seconds: the test waits for runs, it never asserts when they happen. */
const EVERY_2S = '*/2 * * * * *';

async function leads(r: ReplicaProcess): Promise<boolean | undefined> {
  const res = await fetch(`${r.url}/metrics`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
  if (!res || res.status !== 200) return undefined;
  const line = (await res.text()).split('\n').find((l) => l.startsWith('plinth_leader{') && l.includes(`controller="${CONTROLLER}"`));
  return line === undefined ? undefined : line.endsWith(' 1');
}

/** The scheduled snapshots of the platform tenant in `dir`, as the slot of the schedule each was taken in. */
function slots(dir: string): number[] {
  let files: string[] = [];
  try {
    files = readdirSync(path.join(dir, 'default')).filter((f) => f.endsWith('.snapshot'));
  } catch {
    return [];
  }
  return files.map((f) => Math.floor(Date.parse(timeOfName(f)!) / 2000)).sort((a, b) => a - b);
}

// Two server processes in cluster mode (one PostgreSQL, one Redis, one snapshot folder): the scheduler is a controller
// of the ControllerManager, so one of them runs it, and the other takes over when it dies.
describe('scheduled snapshots across replicas: one replica takes them, another takes over', { timeout: 170_000 }, () => {
  let database: TestDatabase;
  let dir: string;
  const replicas: ReplicaProcess[] = [];

  before(async () => {
    const redisUrl = process.env.PLINTH_TEST_REDIS_URL;
    assert.ok(redisUrl, 'PLINTH_TEST_REDIS_URL is not set: run with test/run-tests.mjs');
    database = await createTestDatabase('snapshot_replicas');
    dir = mkdtempSync(path.join(tmpdir(), 'plinth-snapshot-replicas-'));
    const env = { DATABASE_URL: database.url, REDIS_URL: redisUrl, PLINTH_WORKERS: '1', PLINTH_SNAPSHOT_DIR: dir, PLINTH_SNAPSHOT_SCHEDULE: EVERY_2S, PLINTH_SNAPSHOT_KEEP: '1000' };
    replicas.push(await ReplicaProcess.start(env), await ReplicaProcess.start(env));
  });
  after(async () => {
    for (const r of replicas) await r.kill().catch(() => undefined);
    await database?.drop().catch(() => undefined);
  });

  it('one replica leads the scheduler, and each time of the schedule gets one snapshot, not one per replica', async () => {
    await eventually(async () => (await Promise.all(replicas.map(leads))).filter((l) => l === true).length === 1, { message: 'one leader of the scheduler', timeoutMs: 60_000 });
    assert.deepEqual((await Promise.all(replicas.map(leads))).sort(), [false, true]);
    await eventually(() => slots(dir).length >= 4, { message: 'four snapshots of the platform tenant', timeoutMs: 60_000, intervalMs: 200 });
    const taken = slots(dir);
    assert.equal(new Set(taken).size, taken.length, `one snapshot per time of the schedule: ${JSON.stringify(taken)}`);
  });

  it('the other replica takes over when the leader dies, and goes on from the time the Tenant records', async () => {
    const leader = (await Promise.all(replicas.map(leads))).indexOf(true);
    const other = replicas[1 - leader]!;
    await replicas[leader]!.kill();
    const before = slots(dir).length;
    await eventually(async () => (await leads(other)) === true, { message: 'the other replica leads', timeoutMs: 90_000, intervalMs: 500 });
    await eventually(() => slots(dir).length >= before + 2, { message: 'snapshots go on', timeoutMs: 60_000, intervalMs: 200 });
    const taken = slots(dir);
    assert.equal(new Set(taken).size, taken.length, `still one snapshot per time of the schedule: ${JSON.stringify(taken)}`);
    const res = await fetch(`${other.url}/apis/tenancy.plinth.dev/v1beta1/tenants/default`);
    const t = (await res.json()) as { status: { conditions: Array<{ type: string; status: string }> } };
    assert.ok(t.status.conditions.some((c) => c.type === 'SnapshotSucceeded'), 'the Tenant reports its snapshots');
  });
});
