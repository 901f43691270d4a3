import { createWriteStream, readdirSync, renameSync, rmSync, statSync, type WriteStream } from 'node:fs';
import path from 'node:path';

/** Where and how audit events are written. */
export interface AuditLogOptions {
  /** A file path, or `-` for standard output (upstream's `--audit-log-path`). */
  path: string;
  /** Rotate the file once it holds this many bytes (upstream's `--audit-log-maxsize`, in MiB there). */
  maxBytes: number;
  /** Rotated files kept, oldest removed first (upstream's `--audit-log-maxbackup`). */
  maxBackups: number;
  /** Bytes waiting to be written beyond which new events are dropped (and counted) instead of blocking requests. */
  maxBufferedBytes: number;
  /** Called for every event that was dropped. */
  dropped: () => void;
}

/**
 * Appends audit events as JSON lines, never blocking a request: events go
 * into the stream's buffer; once more than `maxBufferedBytes` wait for the
 * disk, new events are dropped and counted. Rotates the file by size, as
 * upstream's lumberjack writer: `audit.log` becomes
 * `audit-<timestamp>.log` and at most `maxBackups` of those are kept.
 */
export class AuditLogWriter {
  private stream: WriteStream | NodeJS.WriteStream;
  private size = 0;

  constructor(private readonly opts: AuditLogOptions) {
    this.stream = this.open();
  }

  /** Writes one event (a JSON line), or drops it when the disk is behind. */
  write(event: object): void {
    if (this.stream.writableLength > this.opts.maxBufferedBytes) {
      this.opts.dropped();
      return;
    }
    const line = `${JSON.stringify(event)}\n`;
    this.stream.write(line);
    this.size += Buffer.byteLength(line);
    if (this.opts.path !== '-' && this.size >= this.opts.maxBytes) this.rotate();
  }

  /** Flushes what is buffered and closes the file. */
  close(): Promise<void> {
    if (this.opts.path === '-') return Promise.resolve();
    return new Promise((resolve) => (this.stream as WriteStream).end(resolve));
  }

  private open(): WriteStream | NodeJS.WriteStream {
    if (this.opts.path === '-') return process.stdout;
    try {
      this.size = statSync(this.opts.path).size;
    } catch {
      this.size = 0;
    }
    return createWriteStream(this.opts.path, { flags: 'a', mode: 0o600 });
  }

  private rotate(): void {
    const old = this.stream as WriteStream;
    const { dir, name, ext } = path.parse(this.opts.path);
    const stamp = new Date().toISOString().replace(/:/g, '-');
    // The old stream keeps writing to its file descriptor after the rename, so nothing buffered is lost.
    renameSync(this.opts.path, path.join(dir, `${name}-${stamp}${ext}`));
    old.end();
    this.stream = this.open();
    const backups = readdirSync(dir || '.')
      .filter((f) => f.startsWith(`${name}-`) && f.endsWith(ext))
      .sort();
    for (const f of backups.slice(0, Math.max(0, backups.length - this.opts.maxBackups))) rmSync(path.join(dir, f), { force: true });
  }
}
