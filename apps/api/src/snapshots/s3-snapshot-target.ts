import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { isScheduledName, oldestFirst, type SnapshotEntry, SnapshotNotFoundError, type SnapshotTarget, timeOfName } from './snapshot-target.js';

/** How to reach the bucket (PLINTH_SNAPSHOT_S3_*). */
export interface S3TargetOptions {
  bucket: string;
  /** Key prefix, without slashes at its ends ('' for none). */
  prefix: string;
  endpoint?: string;
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
}

/**
 * A target in an S3-compatible bucket: `<prefix>/<tenant>/<file>.snapshot`.
 * A snapshot is spooled to a temporary file first, then sent with one
 * PutObject (so its length is known and a failed export leaves no object);
 * credentials are the options' or the AWS SDK's default chain.
 */
export class S3SnapshotTarget implements SnapshotTarget {
  private readonly client: S3Client;

  constructor(private readonly options: S3TargetOptions) {
    this.client = new S3Client({
      region: options.region,
      // Checksums only where S3 requires them: the SDK's default streams a body as aws-chunked with a trailing
      // checksum, which S3-compatible servers (MinIO's older releases, s3rver, Ceph's) store as is or refuse.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      ...(options.endpoint ? { endpoint: options.endpoint, forcePathStyle: true } : {}),
      ...(options.accessKeyId && options.secretAccessKey ? { credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } } : {}),
    });
  }

  get description(): string {
    return `s3://${this.options.bucket}${this.options.prefix ? `/${this.options.prefix}` : ''}`;
  }

  private key(location: string): string {
    return this.options.prefix ? `${this.options.prefix}/${location}` : location;
  }

  async write(location: string, chunks: AsyncIterable<Buffer>): Promise<number> {
    const dir = await mkdtemp(path.join(tmpdir(), 'plinth-snapshot-'));
    const spool = path.join(dir, 'snapshot');
    try {
      await pipeline(Readable.from(chunks), createWriteStream(spool, { mode: 0o600 }));
      const { size } = await stat(spool);
      await this.client.send(new PutObjectCommand({ Bucket: this.options.bucket, Key: this.key(location), Body: createReadStream(spool), ContentLength: size, ContentType: 'application/vnd.plinth.tenant-snapshot+jsonl' }));
      return size;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  async list(tenant: string): Promise<SnapshotEntry[]> {
    const prefix = this.key(`${tenant}/`);
    const out: SnapshotEntry[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.options.bucket, Prefix: prefix, ContinuationToken: token }));
      for (const o of page.Contents ?? []) {
        const file = o.Key!.slice(prefix.length);
        if (!file.endsWith('.snapshot') || file.includes('/')) continue;
        const scheduled = isScheduledName(tenant, file);
        out.push({ location: `${tenant}/${file}`, bytes: o.Size ?? 0, time: (scheduled && timeOfName(file)) || (o.LastModified ?? new Date(0)).toISOString(), scheduled });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return oldestFirst(out);
  }

  async read(location: string): Promise<Buffer> {
    try {
      const got = await this.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: this.key(location) }));
      return Buffer.from(await got.Body!.transformToByteArray());
    } catch (err) {
      if (err instanceof S3ServiceException && (err.name === 'NoSuchKey' || err.$metadata?.httpStatusCode === 404)) {
        throw new SnapshotNotFoundError(`no snapshot ${location} in ${this.description}`);
      }
      throw err;
    }
  }

  async remove(location: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.key(location) }));
  }

  /** Closes the client's connections. */
  close(): void {
    this.client.destroy();
  }
}
