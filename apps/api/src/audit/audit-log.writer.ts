import { createWriteStream, existsSync, fstatSync, openSync, readdirSync, renameSync, rmSync, type WriteStream } from 'node:fs';
import path from 'node:path';

/** Where and how audit events are written. */
export interface AuditLogOptions {
  /** A file path, or `-` for standard output (upstream's `--audit-log-path`). */
  path: string;
  /** Rotate the file once it holds this many bytes (upstream's `--audit-log-maxsize`, in MiB there). */
  maxBytes: number;
  /** Rotated files kept, oldest removed first; 0 keeps them all (upstream's `--audit-log-maxbackup`). */
  maxBackups: number;
  /** Bytes waiting to be written beyond which new events are dropped (and counted) instead of blocking requests. */
  maxBufferedBytes: number;
  /** Called for every event that was dropped. */
  dropped: () => void;
}

/** Escapes `text` for use inside a regular expression. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** lumberjack's backup timestamp: the rotation time in UTC, as Go's `2006-01-02T15-04-05.000`. */
function backupStamp(ms: number): string {
  return new Date(ms).toISOString().slice(0, -1).replace(/:/g, '-');
}

/** Whether `stamp` (as {@link backupStamp} writes it) is a real time, as lumberjack's parse of it demands. */
function isBackupStamp(stamp: string): boolean {
  const t = Date.parse(`${stamp.slice(0, 13)}:${stamp.slice(14, 16)}:${stamp.slice(17)}Z`);
  return !Number.isNaN(t) && backupStamp(t) === stamp;
}

/**
 * Appends audit events as JSON lines, never blocking a request: events go
 * into the stream's buffer; once more than `maxBufferedBytes` wait for the
 * disk, new events are dropped and counted. Rotates the file by size, as
 * upstream's lumberjack writer: `audit.log` becomes
 * `audit-<UTC 2006-01-02T15-04-05.000>.log`; with `maxBackups` above 0 only
 * the newest that many backups are kept, and only files named exactly so
 * (or so plus `.gz`, as lumberjack compresses them) count as backups.
 */
export class AuditLogWriter {
  private stream: WriteStream | NodeJS.WriteStream;
  private size = 0;
  private readonly backupName: RegExp;
  /** The time named by the newest backup this writer made (ms). */
  private lastRotation = 0;
  /** Rotated-away streams still writing what they buffered. */
  private readonly ending = new Set<Promise<void>>();

  constructor(private readonly opts: AuditLogOptions) {
    const { name, ext } = path.parse(opts.path);
    this.backupName = new RegExp(`^${literal(name)}-(\\d{4}-\\d{2}-\\d{2}T\\d{2}-\\d{2}-\\d{2}\\.\\d{3})${literal(ext)}(\\.gz)?$`);
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

  /** Flushes what is buffered (also into files rotated away) and closes the file. */
  async close(): Promise<void> {
    if (this.opts.path === '-') return;
    await Promise.all([new Promise<void>((resolve) => (this.stream as WriteStream).end(resolve)), ...this.ending]);
  }

  private open(): WriteStream | NodeJS.WriteStream {
    if (this.opts.path === '-') return process.stdout;
    // Opened synchronously: the file must exist at once, for a rotation that follows right away renames it.
    const fd = openSync(this.opts.path, 'a', 0o600);
    this.size = fstatSync(fd).size;
    return createWriteStream(this.opts.path, { fd });
  }

  private rotate(): void {
    const old = this.stream as WriteStream;
    const { dir, name, ext } = path.parse(this.opts.path);
    // Two rotations within a millisecond would give one name: the later takes the next millisecond, after
    // the last one used (a pruned name must not be reused: it would sort as older than the newer backups).
    let at = Math.max(Date.now(), this.lastRotation + 1);
    while (existsSync(path.join(dir, `${name}-${backupStamp(at)}${ext}`))) at++;
    this.lastRotation = at;
    // The old stream keeps writing to its file descriptor after the rename, so nothing buffered is lost.
    renameSync(this.opts.path, path.join(dir, `${name}-${backupStamp(at)}${ext}`));
    const ended: Promise<void> = new Promise<void>((resolve) => old.end(resolve)).then(() => void this.ending.delete(ended));
    this.ending.add(ended);
    this.stream = this.open();
    if (this.opts.maxBackups > 0) this.prune(dir || '.');
  }

  /** Removes the oldest backups beyond `maxBackups` (a backup and its `.gz` count once, as in lumberjack). */
  private prune(dir: string): void {
    const byStamp = new Map<string, string[]>();
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const m = entry.isFile() ? this.backupName.exec(entry.name) : null;
      if (!m || !isBackupStamp(m[1])) continue;
      byStamp.set(m[1], [...(byStamp.get(m[1]) ?? []), entry.name]);
    }
    const newestFirst = [...byStamp.keys()].sort().reverse();
    for (const stamp of newestFirst.slice(this.opts.maxBackups)) {
      for (const f of byStamp.get(stamp)!) rmSync(path.join(dir, f), { force: true });
    }
  }
}
