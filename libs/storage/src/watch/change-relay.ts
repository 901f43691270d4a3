import type { ChangeEvent, ChangeLogRepository } from '../change-log.repository.js';
import { isStorageError } from '../storage-error.js';
import type { PipelineLogger } from './pipeline-logger.js';

/** Where the relay hands changes: the local watch cache, or the Redis stream. */
export interface ChangeSink {
  /** Takes a batch of consecutive changes in revision order. A rejection makes the relay retry the batch. */
  publish(changes: ChangeEvent[]): Promise<void> | void;
}

/** Options of {@link ChangeRelay}. */
export interface ChangeRelayOptions {
  changes: ChangeLogRepository;
  sink: ChangeSink;
  /** Publish the changes after this revision first. */
  from: number;
  /** Read the change log at least this often even without a wake-up (covers a missed NOTIFY). */
  pollIntervalMs: number;
  /** The newest committed revision; the relay jumps there when its position was compacted away. */
  currentRevision: () => Promise<number>;
  logger: PipelineLogger;
  batchSize?: number;
  /** Called when the relay had to skip from `from` to `to` because the history in between was compacted. */
  onSkip?: (from: number, to: number) => void;
  /** Called after each failed read or publish. */
  onError?: (err: unknown) => void;
}

/**
 * Reads the change log in revision order and publishes every change exactly
 * once, in order, to its sink. It reads when woken (a NOTIFY, carrying the
 * revision) and on a fallback poll; one read runs at a time, and a wake-up
 * during a read makes it read again, so nothing committed is left behind.
 */
export class ChangeRelay {
  private pos: number;
  private running = false;
  private again = false;
  private stopped = true;
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<void> = Promise.resolve();
  private failing = false;

  constructor(private readonly opts: ChangeRelayOptions) {
    this.pos = opts.from;
  }

  /** The newest revision published. */
  get position(): number {
    return this.pos;
  }

  /** False after a read or publish failed and until one succeeds. */
  get healthy(): boolean {
    return !this.failing;
  }

  /** Starts polling and reads once. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.timer = setInterval(() => this.wake(), this.opts.pollIntervalMs);
    this.timer.unref();
    this.wake();
  }

  /** Stops polling and waits for a read in progress to finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.current;
  }

  /** Reads now (or right after the read in progress). `revision`, if given, is skipped when already published. */
  wake(revision?: number): void {
    if (this.stopped) return;
    if (revision !== undefined && revision <= this.pos) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.current = this.drain().finally(() => {
      this.running = false;
    });
  }

  private async drain(): Promise<void> {
    const batch = this.opts.batchSize ?? 500;
    do {
      this.again = false;
      for (;;) {
        if (this.stopped) return;
        let changes: ChangeEvent[];
        try {
          changes = await this.opts.changes.changesAfter(this.pos, batch);
          if (changes.length > 0) await this.opts.sink.publish(changes);
          this.failing = false;
        } catch (err) {
          if (await this.failed(err)) continue;
          return;
        }
        if (changes.length === 0) break;
        this.pos = changes[changes.length - 1].revision;
        if (changes.length < batch) break;
      }
    } while (this.again);
  }

  /** Handles a failed read or publish; true when the relay moved on and should read again now. */
  private async failed(err: unknown): Promise<boolean> {
    if (isStorageError(err, 'Expired')) {
      try {
        const to = await this.opts.currentRevision();
        this.opts.logger.warn({ from: this.pos, to }, 'watch relay: position compacted away; skipping to the newest revision');
        this.opts.onSkip?.(this.pos, to);
        this.pos = to;
        return true;
      } catch (inner) {
        err = inner;
      }
    }
    if (!this.failing) this.opts.logger.warn({ err: (err as Error)?.message ?? String(err) }, 'watch relay: read or publish failed; retrying');
    this.failing = true;
    this.opts.onError?.(err);
    return false;
  }
}
