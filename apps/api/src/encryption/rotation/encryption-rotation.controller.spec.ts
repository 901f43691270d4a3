import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import type { Database, EncryptionRotationRepository, ObjectKey, RotationBatch, RotationState } from '@plinth/storage';
import { EncryptionRotationController, type RotationCondition } from './encryption-rotation.controller.js';
import { RotationMetrics } from './rotation-metrics.js';

const DB = {} as Database;

/** A repository over `objects` and `changes` row counts, recording what the controller asked. */
class FakeRepository {
  row: RotationState | undefined;
  readonly begun: Array<{ target: string; requested?: string }> = [];
  readonly objectCursors: Array<ObjectKey | undefined> = [];
  failedRows = 0;
  onBatch: () => void = () => {};

  constructor(
    private readonly objects: number,
    private readonly changes: number,
  ) {}

  async state(): Promise<RotationState | undefined> {
    return this.row && { ...this.row };
  }

  async begin(_db: Database, target: string, requested?: string): Promise<RotationState> {
    this.begun.push({ target, requested });
    this.row = { target, phase: 'objects', checked: 0, rewritten: 0, failed: 0, startedAt: new Date(), ...(requested ? { requested } : {}) };
    return { ...this.row };
  }

  async save(_db: Database, s: RotationState): Promise<boolean> {
    if (this.row?.target !== s.target) return false;
    this.row = { ...s };
    return true;
  }

  async estimateRows(): Promise<number> {
    return this.objects + this.changes;
  }

  async rotateObjects(_db: Database, after: ObjectKey | undefined, limit: number) {
    this.objectCursors.push(after);
    this.onBatch();
    const from = after ? Number(after.name) + 1 : 0;
    const n = Math.max(0, Math.min(limit, this.objects - from));
    const batch: RotationBatch = { checked: n, rewritten: n, superseded: 0, failed: 0, failures: [] };
    return { ...batch, last: n > 0 ? { tenant: 't', resource: 'secrets', namespace: 'ns', name: String(from + n - 1) } : undefined };
  }

  async rotateChanges(_db: Database, after: { tenant: string; revision: number } | undefined, limit: number) {
    const from = after ? after.revision + 1 : 0;
    const n = Math.max(0, Math.min(limit, this.changes - from));
    const failed = Math.min(n, this.failedRows);
    this.failedRows -= failed;
    const failures = Array.from({ length: failed }, () => ({ key: { tenant: 't', resource: 'secrets', namespace: 'ns', name: 'x' }, error: 'no matching key' }));
    return { checked: n, rewritten: n - failed, superseded: 0, failed, failures, last: n > 0 ? { tenant: 't', revision: from + n - 1 } : undefined };
  }
}

function controller(repo: FakeRepository, opts: { hash?: () => string; settleMs?: number; requested?: () => string | undefined } = {}) {
  const reports: RotationCondition[] = [];
  const c = new EncryptionRotationController({
    configHash: opts.hash ?? (() => 'sha256:new'),
    shards: () => [{ name: 'default', db: DB }],
    requested: async () => opts.requested?.(),
    repository: repo as unknown as EncryptionRotationRepository,
    report: async (_shard, condition) => {
      reports.push(condition);
    },
    metrics: new RotationMetrics(new Registry()),
    logger: pino({ level: 'silent' }),
    settleMs: opts.settleMs ?? 0,
    rowsPerSecond: 0,
  });
  return { c, reports };
}

describe('EncryptionRotationController', () => {
  it('begins a pass to a new configuration, walks objects then changes, and reports Rotated', async () => {
    const repo = new FakeRepository(1200, 700);
    const { c, reports } = controller(repo);
    await c.reconcile();
    assert.deepEqual(repo.begun, [{ target: 'sha256:new', requested: undefined }]);
    assert.equal(repo.row?.phase, 'done');
    assert.equal(repo.row?.checked, 1900);
    assert.deepEqual(repo.objectCursors.map((k) => k?.name), [undefined, '499', '999']);
    assert.equal(reports.at(-1)?.reason, 'Rotated');
    assert.match(reports.at(-1)!.message, /sha256:new: 1900 rows checked, 1900 rewritten/);
    await c.reconcile();
    assert.equal(repo.begun.length, 1, 'a finished pass is not begun again');
  });

  it('resumes a saved pass from its cursor instead of beginning it again', async () => {
    const repo = new FakeRepository(1200, 0);
    repo.row = { target: 'sha256:new', phase: 'objects', objectCursor: { tenant: 't', resource: 'secrets', namespace: 'ns', name: '699' }, checked: 700, rewritten: 700, failed: 0, startedAt: new Date(0) };
    const { c } = controller(repo);
    await c.reconcile();
    assert.deepEqual(repo.begun, []);
    assert.deepEqual(repo.objectCursors.map((k) => k?.name), ['699', '1199']);
    assert.equal(repo.row?.checked, 1200);
    assert.equal(repo.row?.phase, 'done');
  });

  it('waits the settle time after a new configuration before it begins', async () => {
    const repo = new FakeRepository(10, 0);
    const { c } = controller(repo, { settleMs: 60_000 });
    await c.reconcile();
    assert.deepEqual(repo.begun, []);
  });

  it('a configuration that changes mid-pass ends it; the next check begins a pass to the new one', async () => {
    const repo = new FakeRepository(2000, 0);
    let hash = 'sha256:a';
    repo.onBatch = () => {
      if (repo.objectCursors.length === 2) hash = 'sha256:b';
    };
    const { c } = controller(repo, { hash: () => hash });
    await c.reconcile();
    assert.equal(repo.row?.target, 'sha256:a');
    assert.equal(repo.row?.phase, 'objects', 'not done: stopped after the batch in progress');
    await c.reconcile();
    assert.deepEqual(repo.begun.map((b) => b.target), ['sha256:a', 'sha256:b']);
    assert.equal(repo.row?.phase, 'done');
  });

  it('a new value of the Shard annotation asks for one more pass; unreadable values make the condition False', async () => {
    const repo = new FakeRepository(5, 5);
    let requested: string | undefined;
    const { c, reports } = controller(repo, { requested: () => requested });
    await c.reconcile();
    requested = 'again';
    repo.failedRows = 2;
    await c.reconcile();
    assert.deepEqual(repo.begun, [{ target: 'sha256:new', requested: undefined }, { target: 'sha256:new', requested: 'again' }]);
    assert.deepEqual(reports.at(-1) && { status: reports.at(-1)!.status, reason: reports.at(-1)!.reason }, { status: 'False', reason: 'UnreadableValues' });
    await c.reconcile();
    assert.equal(repo.begun.length, 2, 'the same value asks once');
  });
});
