import type { Logger } from 'pino';
import type { Database, EncryptionRotationRepository, RotationBatch, RotationState, ShardHandle } from '@plinth/storage';
import type { Controller } from '../../controllers/controller.js';
import type { RotationMetrics } from './rotation-metrics.js';

/** The Shard condition that reports the rotation. */
export const ROTATION_CONDITION = 'EncryptionRotated';
/** The Shard annotation that asks for another pass when its value changes (after restarts, see docs/encryption.md). */
export const ROTATE_ANNOTATION = 'encryption.plinth.dev/rotate';

/** A condition of the rotation, as written on a Shard object. */
export interface RotationCondition {
  status: 'True' | 'False';
  reason: 'Rotating' | 'Rotated' | 'UnreadableValues';
  message: string;
}

/** What the rotation controller works with. */
export interface EncryptionRotationDeps {
  /** The `sha256:` hash of the EncryptionConfiguration in force on this replica. */
  configHash: () => string;
  /** The shards this replica is connected to. */
  shards: () => readonly ShardHandle[];
  /** The value of the Shard's {@link ROTATE_ANNOTATION}, if set: a value no pass was begun for asks for one. */
  requested: (shard: string) => Promise<string | undefined>;
  repository: EncryptionRotationRepository;
  /** Writes the condition on the shard's Shard object (throws when it cannot). */
  report: (shard: string, condition: RotationCondition) => Promise<void>;
  metrics: RotationMetrics;
  logger: Logger;
  /**
   * How long a new configuration must have been in force here before a
   * pass to it begins: with automatic reload, one reload interval, so that
   * every replica writes with the new first key before rows are checked.
   */
  settleMs: number;
  /** The most rows checked per second on each shard; 0: no limit. */
  rowsPerSecond: number;
  /** How often the shards are checked for a rotation to begin or resume (default 2 s). */
  intervalMs?: number;
}

/** Rows read per batch (fewer with a rate limit: about one batch a second). */
const BATCH = 500;
/** At most one progress condition per shard this often. */
const PROGRESS_EVERY_MS = 2000;
/** Failures logged per batch (each is counted). */
const LOGGED_FAILURES = 5;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The encryption rotation job (an elected controller: one replica runs it).
 * When the EncryptionConfiguration in force differs from the one a shard
 * was last rotated to, it walks that shard's object rows, then its change
 * log, in key order and in batches, and re-encrypts in place every stored
 * value not written by its resource's first provider (see
 * EncryptionRotationRepository): the plaintext and the revision stay, so no
 * watcher sees an event and no client's resourceVersion goes stale. The
 * cursor is saved after each batch: a restart, or another replica taking
 * over, continues from it. Progress is the Shard condition
 * `EncryptionRotated` and the `plinth_encryption_rotation_*` metrics.
 */
export class EncryptionRotationController implements Controller {
  readonly name = 'encryption-rotation-controller';
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private seenHash = '';
  private seenAt = 0;
  /** `<shard> <target>` of the passes whose end this replica has reported. */
  private readonly reported = new Set<string>();
  private readonly lastProgress = new Map<string, number>();

  constructor(private readonly deps: EncryptionRotationDeps) {}

  start(): void {
    this.stopped = false;
    const pass = () => {
      this.running ??= this.reconcile()
        .catch((err) => this.deps.logger.warn({ err: (err as Error).message }, 'encryption rotation: pass failed; retrying'))
        .finally(() => {
          this.running = undefined;
        });
    };
    pass();
    this.timer = setInterval(pass, this.deps.intervalMs ?? 2000);
    this.timer.unref();
  }

  /** Stops after the batch in progress (its cursor is saved). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One check of every shard: begins, resumes or confirms its rotation. */
  async reconcile(): Promise<void> {
    const hash = this.deps.configHash();
    if (hash !== this.seenHash) {
      this.seenHash = hash;
      this.seenAt = Date.now();
    }
    for (const shard of this.deps.shards()) {
      if (this.stopped) return;
      await this.reconcileShard(shard, hash);
    }
  }

  private async reconcileShard(shard: ShardHandle, target: string): Promise<void> {
    let state = await this.deps.repository.state(shard.db);
    const requested = await this.deps.requested(shard.name);
    const asked = state?.phase === 'done' && requested !== undefined && requested !== state.requested;
    if (!state || state.target !== target || asked) {
      if (Date.now() - this.seenAt < this.deps.settleMs) return;
      state = await this.deps.repository.begin(shard.db, target, requested);
      this.deps.logger.info({ shard: shard.name, target, requested }, 'encryption rotation: started');
    } else if (state.phase !== 'done') {
      this.deps.logger.info({ shard: shard.name, target, phase: state.phase, checked: state.checked }, 'encryption rotation: resuming from its cursor');
    }
    this.deps.metrics.checked.set({ shard: shard.name }, state.checked);
    if (state.phase !== 'done') await this.runPass(shard, state);
    if (state.phase === 'done') await this.reportEnd(shard.name, state);
  }

  /** Runs batches until the pass is done, the process stops, or the configuration changes (the next check begins anew). Mutates `state`. */
  private async runPass(shard: ShardHandle, state: RotationState): Promise<void> {
    const labels = { shard: shard.name };
    this.deps.metrics.running.set(labels, 1);
    this.deps.metrics.estimated.set(labels, await this.deps.repository.estimateRows(shard.db));
    await this.progress(shard.name, state, true);
    try {
      while (state.phase !== 'done' && !this.stopped && this.deps.configHash() === state.target) {
        const began = Date.now();
        const checked = await this.step(shard.db, shard.name, state);
        if (!(await this.deps.repository.save(shard.db, state))) return;
        this.deps.metrics.checked.set(labels, state.checked);
        await this.progress(shard.name, state, false);
        const rate = this.deps.rowsPerSecond;
        if (rate > 0) await sleep(Math.max(0, (checked * 1000) / rate - (Date.now() - began)));
      }
      if (state.phase === 'done') this.deps.logger.info({ shard: shard.name, target: state.target, checked: state.checked, rewritten: state.rewritten, failed: state.failed }, 'encryption rotation: done');
    } finally {
      this.deps.metrics.running.set(labels, 0);
    }
  }

  /** One batch of the pass's phase; moves its cursor, or to the next phase at the end. Returns the rows checked. */
  private async step(db: Database, shard: string, state: RotationState): Promise<number> {
    const limit = this.deps.rowsPerSecond > 0 ? Math.max(1, Math.min(BATCH, this.deps.rowsPerSecond)) : BATCH;
    if (state.phase === 'objects') {
      const batch = await this.deps.repository.rotateObjects(db, state.objectCursor, limit);
      this.count(shard, 'objects', state, batch);
      state.objectCursor = batch.last;
      if (batch.checked < limit) state.phase = 'changes';
      return batch.checked;
    }
    const batch = await this.deps.repository.rotateChanges(db, state.changeCursor, limit);
    this.count(shard, 'changes', state, batch);
    state.changeCursor = batch.last;
    if (batch.checked < limit) state.phase = 'done';
    return batch.checked;
  }

  private count(shard: string, table: 'objects' | 'changes', state: RotationState, batch: RotationBatch): void {
    state.checked += batch.checked;
    state.rewritten += batch.rewritten;
    state.failed += batch.failed;
    const rows = this.deps.metrics.rows;
    rows.inc({ shard, table, result: 'current' }, batch.checked - batch.rewritten - batch.superseded - batch.failed);
    rows.inc({ shard, table, result: 'rewritten' }, batch.rewritten);
    rows.inc({ shard, table, result: 'superseded' }, batch.superseded);
    rows.inc({ shard, table, result: 'failed' }, batch.failed);
    for (const f of batch.failures.slice(0, LOGGED_FAILURES)) {
      this.deps.logger.error({ shard, table, tenant: f.key.tenant, resource: f.key.resource, namespace: f.key.namespace, name: f.key.name, err: f.error }, 'encryption rotation: a stored value cannot be read; left as it is');
    }
  }

  /** Writes the Rotating condition (at most every PROGRESS_EVERY_MS unless `force`). Failures to write it are logged, not fatal. */
  private async progress(shard: string, state: RotationState, force: boolean): Promise<void> {
    if (!force && Date.now() - (this.lastProgress.get(shard) ?? 0) < PROGRESS_EVERY_MS) return;
    this.lastProgress.set(shard, Date.now());
    const where = state.phase === 'objects' ? 'objects' : 'the change log';
    const message = `re-encrypting stored values for ${state.target}: checking ${where}; ${state.checked} rows checked, ${state.rewritten} rewritten, ${state.failed} unreadable`;
    await this.deps.report(shard, { status: 'False', reason: 'Rotating', message }).catch((err) => this.deps.logger.warn({ shard, err: (err as Error).message }, 'encryption rotation: cannot write progress'));
  }

  /** Reports a finished pass once per replica (True, or False naming the unreadable values); retried at the next check if the write fails. */
  private async reportEnd(shard: string, state: RotationState): Promise<void> {
    const id = `${shard} ${state.target} ${state.requested ?? ''}`;
    if (this.reported.has(id)) return;
    const counts = `${state.checked} rows checked, ${state.rewritten} rewritten`;
    const condition: RotationCondition =
      state.failed === 0
        ? { status: 'True', reason: 'Rotated', message: `every stored value (objects and change log) is written by the first provider of ${state.target}: ${counts}` }
        : { status: 'False', reason: 'UnreadableValues', message: `${state.failed} stored values could not be read and were left as they are (see the logs); ${counts}` };
    try {
      await this.deps.report(shard, condition);
      this.reported.add(id);
      this.deps.metrics.completed.set({ shard }, (state.finishedAt ?? new Date()).getTime() / 1000);
    } catch (err) {
      this.deps.logger.warn({ shard, err: (err as Error).message }, 'encryption rotation: cannot write its condition; retrying');
    }
  }
}
