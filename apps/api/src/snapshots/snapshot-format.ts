import { createHash, type Hash } from 'node:crypto';
import { SNAPSHOT_MEDIA_TYPE } from '../http/http-limits.js';

export { SNAPSHOT_MEDIA_TYPE };

/** The `format` of a snapshot's header. */
export const SNAPSHOT_FORMAT = 'tenancy.plinth.dev/tenant-snapshot';
/** The version of the format this code writes and reads. */
export const SNAPSHOT_VERSION = 1;
/** The scheme Secrets are sealed with: age (age-encryption.org/v1) to X25519 recipients. */
export const AGE_X25519 = 'age-x25519';

/** How the Secrets of a snapshot are kept: sealed to age recipients, or in the clear (only between the CLI and the server, never written out by an export). */
export type SecretsScheme = { scheme: typeof AGE_X25519; recipients: string[] } | { scheme: 'none' };

/** The first line of a snapshot. */
export interface SnapshotHeader {
  format: typeof SNAPSHOT_FORMAT;
  version: number;
  /** The tenant exported: its name, uid, labels, annotations and spec as they are at export time. */
  tenant: { name: string; uid?: string; labels?: Record<string, string>; annotations?: Record<string, string>; spec: Record<string, unknown> };
  /** The revision of the tenant's shard the objects are as of: every change at or below it, none above. */
  revision: number;
  /** When the export started (RFC 3339). */
  createdAt: string;
  secrets: SecretsScheme;
}

/** One object: its storage key and its body as stored (decrypted), or for a sealed Secret the age ciphertext of its body (base64). */
export interface SnapshotRecord {
  resource: string;
  namespace: string;
  name: string;
  object?: Record<string, unknown>;
  sealed?: string;
}

/** The last line: how many records came before and the SHA-256 (hex) of every byte before this line. */
export interface SnapshotTrailer {
  objects: number;
  sha256: string;
}

/** A snapshot as read: header, records, trailer; every record checked. */
export interface ParsedSnapshot {
  header: SnapshotHeader;
  records: SnapshotRecord[];
  trailer: SnapshotTrailer;
}

/** A snapshot that cannot be read (damaged, truncated, not a snapshot, another version). Its message says where. */
export class SnapshotFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SnapshotFormatError';
  }
}

/**
 * Writes a snapshot line by line (JSON Lines: one JSON document per line,
 * which JSON text cannot break, so every record is framed by its newline):
 * the header, the records, and a trailer with the count and the SHA-256 of
 * everything before it. Each call returns the bytes to send.
 */
export class SnapshotWriter {
  private readonly hash: Hash = createHash('sha256');
  private count = 0;

  /** The header line. Call once, first. */
  header(h: SnapshotHeader): Buffer {
    return this.line({ header: h });
  }

  /** One record's line. */
  record(r: SnapshotRecord): Buffer {
    this.count++;
    return this.line({ record: r });
  }

  /** The trailer line; nothing may follow. */
  trailer(): Buffer {
    return Buffer.from(`${JSON.stringify({ end: { objects: this.count, sha256: this.hash.digest('hex') } satisfies SnapshotTrailer })}\n`);
  }

  private line(doc: unknown): Buffer {
    const b = Buffer.from(`${JSON.stringify(doc)}\n`);
    this.hash.update(b);
    return b;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Reads a whole snapshot and checks it before anything is done with it:
 * header (format, version, tenant, revision, secrets scheme), each record
 * (its key, and an object whose metadata names that key and has a uid, or a
 * sealed body), no key twice, the trailer present and last, its count and
 * its SHA-256 equal to what was read. Throws SnapshotFormatError naming the
 * first fault. Does not decrypt sealed records.
 */
export function parseSnapshot(bytes: Buffer): ParsedSnapshot {
  const steps = readSteps(bytes);
  for (;;) {
    const s = steps.next();
    if (s.done) return s.value;
  }
}

/**
 * {@link parseSnapshot} as low-priority work on a server: the same checks,
 * giving the event loop back between slices of lines (`step`, e.g.
 * SnapshotPacer.step), so a large snapshot's parse does not hold other
 * requests up. Rejects with SnapshotFormatError.
 */
export async function parseSnapshotPaced(bytes: Buffer, step: () => Promise<void>): Promise<ParsedSnapshot> {
  const steps = readSteps(bytes);
  for (;;) {
    const s = steps.next();
    if (s.done) return s.value;
    await step();
  }
}

/** Lines read between two yields of {@link readSteps}. */
const LINES_PER_STEP = 64;

/** The parse of {@link parseSnapshot}, yielding every {@link LINES_PER_STEP} lines. */
function* readSteps(bytes: Buffer): Generator<void, ParsedSnapshot, undefined> {
  if (bytes.length === 0) throw new SnapshotFormatError('the snapshot is empty');
  const hash = createHash('sha256');
  let header: SnapshotHeader | undefined;
  let trailer: SnapshotTrailer | undefined;
  const records: SnapshotRecord[] = [];
  const keys = new Set<string>();
  let start = 0;
  let lineNo = 0;
  while (start < bytes.length) {
    lineNo++;
    if (lineNo % LINES_PER_STEP === 0) yield;
    const nl = bytes.indexOf(0x0a, start);
    if (nl < 0) throw new SnapshotFormatError(`the snapshot is truncated: line ${lineNo} has no end (no trailer)`);
    if (trailer) throw new SnapshotFormatError(`line ${lineNo}: data after the trailer`);
    const raw = bytes.subarray(start, nl + 1);
    start = nl + 1;
    let doc: unknown;
    try {
      doc = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new SnapshotFormatError(`line ${lineNo} is not JSON: the snapshot is damaged`);
    }
    if (!isObject(doc)) throw new SnapshotFormatError(`line ${lineNo} is not a JSON object: the snapshot is damaged`);
    if (lineNo === 1) {
      header = checkHeader(doc.header);
      hash.update(raw);
      continue;
    }
    if ('end' in doc) {
      trailer = checkTrailer(doc.end, lineNo);
      continue;
    }
    const r = checkRecord(doc.record, lineNo, header!);
    const key = `${r.resource}\u0000${r.namespace}\u0000${r.name}`;
    if (keys.has(key)) throw new SnapshotFormatError(`line ${lineNo}: ${describe(r)} appears twice`);
    keys.add(key);
    records.push(r);
    hash.update(raw);
  }
  if (!header) throw new SnapshotFormatError('the snapshot has no header');
  if (!trailer) throw new SnapshotFormatError(`the snapshot is truncated: no trailer after ${records.length} records`);
  if (trailer.objects !== records.length) throw new SnapshotFormatError(`the snapshot is damaged: its trailer counts ${trailer.objects} records, ${records.length} were read`);
  if (trailer.sha256 !== hash.digest('hex')) throw new SnapshotFormatError('the snapshot is damaged: its SHA-256 does not match its content');
  return { header, records, trailer };
}

/** `resource namespace/name` of a record, for messages. */
export function describe(r: Pick<SnapshotRecord, 'resource' | 'namespace' | 'name'>): string {
  return `${r.resource} ${r.namespace ? `${r.namespace}/` : ''}${r.name}`;
}

function checkHeader(h: unknown): SnapshotHeader {
  if (!isObject(h) || h.format !== SNAPSHOT_FORMAT) throw new SnapshotFormatError(`not a tenant snapshot: the first line must be a header of format ${SNAPSHOT_FORMAT}`);
  if (h.version !== SNAPSHOT_VERSION) throw new SnapshotFormatError(`snapshot version ${String(h.version)} is not supported (this server reads version ${SNAPSHOT_VERSION})`);
  if (!isObject(h.tenant) || typeof h.tenant.name !== 'string' || !isObject(h.tenant.spec)) throw new SnapshotFormatError('the snapshot header names no tenant (tenant.name, tenant.spec)');
  if (!Number.isSafeInteger(h.revision) || (h.revision as number) < 1) throw new SnapshotFormatError('the snapshot header has no revision');
  const s = h.secrets;
  const sealed = isObject(s) && s.scheme === AGE_X25519 && Array.isArray(s.recipients) && s.recipients.every((r) => typeof r === 'string');
  if (!sealed && !(isObject(s) && s.scheme === 'none')) throw new SnapshotFormatError(`the snapshot header has no known secrets scheme (${AGE_X25519} or none)`);
  return h as unknown as SnapshotHeader;
}

function checkTrailer(t: unknown, lineNo: number): SnapshotTrailer {
  if (!isObject(t) || !Number.isSafeInteger(t.objects) || typeof t.sha256 !== 'string') throw new SnapshotFormatError(`line ${lineNo}: the trailer is malformed`);
  return { objects: t.objects as number, sha256: t.sha256 };
}

function checkRecord(r: unknown, lineNo: number, header: SnapshotHeader): SnapshotRecord {
  if (!isObject(r) || typeof r.resource !== 'string' || !r.resource || typeof r.namespace !== 'string' || typeof r.name !== 'string' || !r.name) {
    throw new SnapshotFormatError(`line ${lineNo}: not a record (resource, namespace, name): the snapshot is damaged`);
  }
  const rec = { resource: r.resource, namespace: r.namespace, name: r.name } as SnapshotRecord;
  if (typeof r.sealed === 'string') {
    if (header.secrets.scheme !== AGE_X25519) throw new SnapshotFormatError(`line ${lineNo}: ${describe(rec)} is sealed but the header says Secrets are not`);
    rec.sealed = r.sealed;
    return rec;
  }
  checkObject(r.object, rec, `line ${lineNo}`);
  rec.object = r.object as Record<string, unknown>;
  return rec;
}

/** Checks that `o` is an object whose metadata names `key` and carries a uid. Throws SnapshotFormatError naming `where`. */
export function checkObject(o: unknown, key: Pick<SnapshotRecord, 'resource' | 'namespace' | 'name'>, where: string): void {
  const m = isObject(o) ? o.metadata : undefined;
  if (!isObject(m) || m.name !== key.name || (m.namespace ?? '') !== key.namespace || typeof m.uid !== 'string' || !m.uid) {
    throw new SnapshotFormatError(`${where}: the object of ${describe(key)} does not carry that name, namespace and a uid: the snapshot is damaged`);
  }
}
