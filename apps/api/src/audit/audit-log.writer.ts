import { closeSync, existsSync, openSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { type FileHandle, open, stat } from 'node:fs/promises';
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

/** How long a rotation lock may stand before it is taken for the leftover of a process that died holding it. */
const STALE_LOCK_MS = 10_000;

function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException).code;
}

/**
 * Appends audit events as JSON lines, never blocking a request: events are
 * queued and appended one by one, each in one `write` to a file opened
 * with O_APPEND (so the lines of several processes never interleave);
 * once more than `maxBufferedBytes` wait for the disk, new events are
 * dropped and counted. Rotates the file by size as upstream's lumberjack
 * writer does (an event that would take the file past `maxBytes` goes into
 * a new file; an event larger than that alone gets a file of its own):
 * `audit.log` becomes `audit-<UTC 2006-01-02T15-04-05.000>.log`; with
 * `maxBackups` above 0 only the newest that many backups are kept, and
 * only files named exactly so (or so plus `.gz`, as lumberjack compresses
 * them) count as backups.
 *
 * Several processes (PLINTH_WORKERS) may append to one path: the decision
 * is taken on the file itself (its size by fstat before each event, so
 * every writer counts every writer's bytes), exactly one process renames
 * it (under the lock file `<path>.lock`, after checking that the path is
 * still the full file), and each process notices a rename by another
 * (the path no longer names its open file) and reopens. With two writers
 * the file exceeds `maxBytes` by at most one event; no event is lost or
 * written twice.
 */
export class AuditLogWriter {
  private handle: FileHandle | undefined;
  /** Device and inode of `handle`'s file, to notice when the path names another file. */
  private identity = '';
  private readonly backupName: RegExp;
  /** The time named by the newest backup this writer made (ms). */
  private lastRotation = 0;
  private readonly queue: Buffer[] = [];
  private queuedBytes = 0;
  private draining: Promise<void> | undefined;

  constructor(private readonly opts: AuditLogOptions) {
    const { name, ext } = path.parse(opts.path);
    this.backupName = new RegExp(`^${literal(name)}-(\\d{4}-\\d{2}-\\d{2}T\\d{2}-\\d{2}-\\d{2}\\.\\d{3})${literal(ext)}(\\.gz)?$`);
    // Created at once (as upstream opens it at start-up), so that it exists before the first request.
    if (opts.path !== '-') closeSync(openSync(opts.path, 'a', 0o600));
  }

  /** Queues one event (a JSON line), or drops it when the disk is behind. */
  write(event: object): void {
    const line = `${JSON.stringify(event)}\n`;
    if (this.opts.path === '-') {
      if (process.stdout.writableLength > this.opts.maxBufferedBytes) this.opts.dropped();
      else process.stdout.write(line);
      return;
    }
    if (this.queuedBytes > this.opts.maxBufferedBytes) {
      this.opts.dropped();
      return;
    }
    const buf = Buffer.from(line);
    this.queue.push(buf);
    this.queuedBytes += buf.length;
    this.draining ??= this.drain().finally(() => (this.draining = undefined));
  }

  /** Writes what is queued and closes the file. */
  async close(): Promise<void> {
    if (this.opts.path === '-') return;
    while (this.draining) await this.draining;
    const h = this.handle;
    this.handle = undefined;
    await h?.close();
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const buf = this.queue[0];
      try {
        await this.append(buf);
      } catch {
        this.opts.dropped();
      }
      this.queue.shift();
      this.queuedBytes -= buf.length;
    }
  }

  /** Appends `buf` to the file the path names now, rotating first when it would take the file past maxBytes. */
  private async append(buf: Buffer): Promise<void> {
    for (;;) {
      const h = await this.current();
      const { size } = await h.stat();
      if (size === 0 || size + buf.length <= this.opts.maxBytes) {
        let done = 0;
        while (done < buf.length) done += (await h.write(buf, done, buf.length - done)).bytesWritten;
        return;
      }
      if (!this.rotate(buf.length)) await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }

  /** The open file, reopened when the path now names another file (rotated by another process) or none. */
  private async current(): Promise<FileHandle> {
    const st = await stat(this.opts.path).catch((err: unknown) => {
      if (errno(err) === 'ENOENT') return undefined;
      throw err;
    });
    if (this.handle && st && `${st.dev}:${st.ino}` === this.identity) return this.handle;
    const old = this.handle;
    this.handle = undefined;
    await old?.close();
    const h = await open(this.opts.path, 'a', 0o600);
    const own = await h.stat();
    this.handle = h;
    this.identity = `${own.dev}:${own.ino}`;
    return h;
  }

  /**
   * Renames the full file to a backup name, if this process gets the lock
   * and the path still names the file this process found full. Returns
   * false when another process holds the lock (try again shortly).
   */
  private rotate(incoming: number): boolean {
    const lock = `${this.opts.path}.lock`;
    let fd: number;
    try {
      fd = openSync(lock, 'wx', 0o600);
    } catch (err) {
      if (errno(err) !== 'EEXIST') throw err;
      try {
        if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) rmSync(lock, { force: true });
      } catch {
        // Gone meanwhile: its holder finished.
      }
      return false;
    }
    try {
      const st = statSync(this.opts.path, { throwIfNoEntry: false });
      // Another process rotated it first (the path names a new file, or none yet): append to the new one.
      if (!st || `${st.dev}:${st.ino}` !== this.identity || st.size === 0 || st.size + incoming <= this.opts.maxBytes) return true;
      const { dir, name, ext } = path.parse(this.opts.path);
      const backups = this.backups(dir || '.');
      // Each backup names a later time than every other (a pruned name must not be reused: it would sort as older).
      const newest = backups.length > 0 ? Date.parse(`${backups[0].slice(0, 13)}:${backups[0].slice(14, 16)}:${backups[0].slice(17)}Z`) : 0;
      let at = Math.max(Date.now(), this.lastRotation + 1, newest + 1);
      while (existsSync(path.join(dir, `${name}-${backupStamp(at)}${ext}`))) at++;
      this.lastRotation = at;
      renameSync(this.opts.path, path.join(dir, `${name}-${backupStamp(at)}${ext}`));
      if (this.opts.maxBackups > 0) this.prune(dir || '.');
      return true;
    } finally {
      closeSync(fd);
      rmSync(lock, { force: true });
    }
  }

  /** The stamps of the backups in `dir`, newest first. */
  private backups(dir: string): string[] {
    const stamps = new Set<string>();
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const m = entry.isFile() ? this.backupName.exec(entry.name) : null;
      if (m && isBackupStamp(m[1])) stamps.add(m[1]);
    }
    return [...stamps].sort().reverse();
  }

  /** Removes the oldest backups beyond `maxBackups` (a backup and its `.gz` count once, as in lumberjack). */
  private prune(dir: string): void {
    const { name, ext } = path.parse(this.opts.path);
    for (const stamp of this.backups(dir).slice(this.opts.maxBackups)) {
      for (const suffix of ['', '.gz']) rmSync(path.join(dir, `${name}-${stamp}${ext}${suffix}`), { force: true });
    }
  }
}
