import { createWriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** One snapshot in a target. */
export interface SnapshotEntry {
  /** `<tenant>/<file>.snapshot`: what status.snapshots.location and spec.source.snapshot name. */
  location: string;
  bytes: number;
  /** When it was written (RFC 3339). */
  time: string;
  /** True for a snapshot the schedule wrote (its name says when): only those are deleted to keep N. */
  scheduled: boolean;
}

/** No snapshot at a location. */
export class SnapshotNotFoundError extends Error {}

/**
 * Where scheduled snapshots are written and spec.source reads them: a
 * directory (PLINTH_SNAPSHOT_DIR) or an S3-compatible bucket
 * (PLINTH_SNAPSHOT_S3_URL). Locations are `<tenant>/<file>.snapshot`.
 */
export interface SnapshotTarget {
  /** For messages: the directory, or `s3://bucket/prefix`. */
  readonly description: string;
  /** Writes the snapshot whole under `location` (nothing appears there unless every chunk was written); resolves with its bytes. */
  write(location: string, chunks: AsyncIterable<Buffer>): Promise<number>;
  /** The tenant's snapshots, oldest first. [] when it has none. */
  list(tenant: string): Promise<SnapshotEntry[]>;
  /** The bytes at `location`; SnapshotNotFoundError when there are none. */
  read(location: string): Promise<Buffer>;
  /** Deletes `location` (nothing when it is gone already). */
  remove(location: string): Promise<void>;
}

/** `<tenant>-<UTC time to the ms>-r<revision>.snapshot`: the file name of a scheduled snapshot (sorting by name sorts by time). */
export function scheduledSnapshotName(tenant: string, at: Date, revision: number): string {
  const stamp = at.toISOString().replace(/[-:]/g, '');
  return `${tenant}/${tenant}-${stamp}-r${revision}.snapshot`;
}

/** True for a file name {@link scheduledSnapshotName} makes for `tenant`. */
export function isScheduledName(tenant: string, file: string): boolean {
  return file.startsWith(`${tenant}-`) && /^\d{8}T\d{6}\.\d{3}Z-r\d+\.snapshot$/.test(file.slice(tenant.length + 1));
}

/** Orders entries oldest first: scheduled ones by their names' times, others by their write times. Pure; returns a new list. */
export function oldestFirst(entries: SnapshotEntry[]): SnapshotEntry[] {
  return [...entries].sort((a, b) => a.time.localeCompare(b.time) || a.location.localeCompare(b.location));
}

/** The time a scheduled snapshot's name says, RFC 3339; undefined for another name. */
export function timeOfName(file: string): string | undefined {
  const m = /-(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)\.(\d{3})Z-r\d+\.snapshot$/.exec(file);
  return m ? `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.${m[7]}Z` : undefined;
}

/** A target in a directory: `<dir>/<tenant>/<file>.snapshot`, written to a `.partial` file renamed when complete. */
export class DirectorySnapshotTarget implements SnapshotTarget {
  constructor(private readonly directory: string) {}

  get description(): string {
    return this.directory;
  }

  private file(location: string): string {
    return path.join(this.directory, ...location.split('/'));
  }

  async write(location: string, chunks: AsyncIterable<Buffer>): Promise<number> {
    const file = this.file(location);
    await mkdir(path.dirname(file), { recursive: true });
    const partial = `${file}.partial`;
    let bytes = 0;
    const counted = async function* () {
      for await (const c of chunks) {
        bytes += c.length;
        yield c;
      }
    };
    try {
      await pipeline(Readable.from(counted()), createWriteStream(partial, { flags: 'w', mode: 0o600 }));
      await rename(partial, file);
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
    return bytes;
  }

  async list(tenant: string): Promise<SnapshotEntry[]> {
    let files: string[];
    try {
      files = await readdir(path.join(this.directory, tenant));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const out: SnapshotEntry[] = [];
    for (const f of files.filter((n) => n.endsWith('.snapshot'))) {
      const st = await stat(path.join(this.directory, tenant, f)).catch(() => undefined);
      if (!st?.isFile()) continue;
      const scheduled = isScheduledName(tenant, f);
      out.push({ location: `${tenant}/${f}`, bytes: st.size, time: (scheduled && timeOfName(f)) || st.mtime.toISOString(), scheduled });
    }
    return oldestFirst(out);
  }

  async read(location: string): Promise<Buffer> {
    try {
      return await readFile(this.file(location));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new SnapshotNotFoundError(`no snapshot ${location} in ${this.directory}`);
      throw err;
    }
  }

  async remove(location: string): Promise<void> {
    await rm(this.file(location), { force: true });
  }
}
