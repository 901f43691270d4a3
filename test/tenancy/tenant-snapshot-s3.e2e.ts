import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { generateX25519Identity, identityToRecipient } from 'age-encryption';
import request from 'supertest';
import { parseSnapshot } from '../../apps/api/src/snapshots/snapshot-format.js';
import { eventually } from '../support/eventually.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const BUCKET = 'snaps';

/** s3rver (npm): a real S3-compatible server in this process, storing objects in a directory. */
interface S3rver {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
}
const S3rverClass = createRequire(import.meta.url)('s3rver') as new (options: Record<string, unknown>) => S3rver;

async function tenant(url: string, name: string) {
  return (await request(url).get(`${TENANTS}/${name}`).expect(200)).body as {
    status: { phase?: string; snapshots?: { location?: string; revision?: number }; conditions?: Array<{ type: string; status: string; reason: string; message: string }> };
  };
}

describe('scheduled tenant snapshots to S3-compatible storage (s3rver), platform-wide schedule', { timeout: 170_000 }, () => {
  let s3: S3rver;
  let client: S3Client;
  let s: TestServer;
  let identity: string;

  const keys = async (prefix: string): Promise<string[]> => ((await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }))).Contents ?? []).map((o) => o.Key!).sort();

  before(async () => {
    s3 = new S3rverClass({ port: 0, address: '127.0.0.1', silent: true, directory: mkdtempSync(path.join(tmpdir(), 'plinth-s3rver-')) });
    const { port } = await s3.run();
    const endpoint = `http://127.0.0.1:${port}`;
    client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
    await client.send(new CreateBucketCommand({ Bucket: BUCKET }));
    identity = await generateX25519Identity();
    s = await startTestServer('tenant-snapshot-s3', {
      PLINTH_SNAPSHOT_S3_URL: `s3://${BUCKET}/plinth`,
      PLINTH_SNAPSHOT_S3_ENDPOINT: endpoint,
      PLINTH_SNAPSHOT_S3_ACCESS_KEY_ID: 'S3RVER',
      PLINTH_SNAPSHOT_S3_SECRET_ACCESS_KEY: 'S3RVER',
      // Every two seconds for every tenant: the test waits for runs, it never asserts when they happen.
      PLINTH_SNAPSHOT_SCHEDULE: '*/2 * * * * *',
      PLINTH_SNAPSHOT_KEEP: '2',
      PLINTH_SNAPSHOT_RECIPIENTS: await identityToRecipient(identity),
    });
    await request(s.url).post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'acme' }, spec: {} }).expect(201);
    await eventually(async () => (await tenant(s.url, 'acme')).status.phase === 'Active', { message: 'acme Active' });
    await request(s.url).post('/clusters/acme/api/v1/namespaces').send({ metadata: { name: 'app' } }).expect(201);
    await request(s.url).post('/clusters/acme/api/v1/namespaces/app/configmaps').send({ metadata: { name: 'settings' }, data: { mode: 'slow' } }).expect(201);
  });
  after(async () => {
    await s?.close();
    client?.destroy();
    await s3?.close();
  });

  it('writes every tenant\'s snapshots to the bucket on the platform\'s schedule and keeps the newest N there', async () => {
    const seen = new Set<string>();
    await eventually(
      async () => {
        const t = await tenant(s.url, 'acme');
        const ok = t.status.conditions?.find((c) => c.type === 'SnapshotSucceeded')?.status === 'True';
        if (ok && t.status.snapshots?.location) seen.add(t.status.snapshots.location);
        return seen.size >= 4;
      },
      { message: 'four snapshots of acme', timeoutMs: 90_000, intervalMs: 200 },
    );
    await request(s.url).patch(`${TENANTS}/acme`).set('Content-Type', 'application/merge-patch+json').send({ spec: { snapshots: { suspend: true } } }).expect(200);
    const newest = await eventually(async () => {
      const t = await tenant(s.url, 'acme');
      return t.status.conditions?.find((c) => c.type === 'SnapshotSucceeded')?.status === 'True' ? t.status.snapshots!.location! : false;
    }, { message: 'the last run ended', timeoutMs: 30_000 });
    const stored = await keys('plinth/acme/');
    assert.equal(stored.length, 2, `two kept in the bucket: ${stored.join(', ')}`);
    assert.ok(stored.includes(`plinth/${newest}`), 'the newest is kept');
    const [oldest] = [...seen].sort();
    assert.ok(!stored.includes(`plinth/${oldest}`), 'the oldest was deleted');
    // The platform's own tenant is on the schedule too.
    assert.ok((await keys('plinth/default/')).length >= 1, 'the platform tenant has snapshots');

    const got = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `plinth/${newest}` }));
    const parsed = parseSnapshot(Buffer.from(await got.Body!.transformToByteArray()));
    assert.equal(parsed.header.tenant.name, 'acme');
    assert.ok(parsed.records.some((r) => r.resource === 'configmaps' && r.name === 'settings'));

    const list = (await request(s.url).get(`${TENANTS}/acme/snapshots`).expect(200)).body;
    assert.equal(list.target, `s3://${BUCKET}/plinth`);
    assert.deepEqual(list.items.map((i: { location: string }) => `plinth/${i.location}`), [...stored].reverse());
  });

  it('restores a new tenant from a snapshot in the bucket (spec.source)', async () => {
    const location = (await tenant(s.url, 'acme')).status.snapshots!.location!;
    await request(s.url).post('/api/v1/namespaces').send({ metadata: { name: 'backups' } }).expect(201);
    await request(s.url).post('/api/v1/namespaces/backups/secrets').send({ metadata: { name: 'key' }, stringData: { 'age.key': identity } }).expect(201);
    await request(s.url)
      .post(TENANTS)
      .send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'acme-again' }, spec: { snapshots: { suspend: true }, source: { snapshot: location, identitySecretRef: { namespace: 'backups', name: 'key', key: 'age.key' } } } })
      .expect(201);
    const c = await eventually(async () => {
      const x = (await tenant(s.url, 'acme-again')).status.conditions?.find((y) => y.type === 'SourceRestored');
      return x && x.status !== 'Unknown' ? x : false;
    }, { message: 'the restore from the bucket', timeoutMs: 60_000 });
    assert.equal(c.status, 'True', c.message);
    const cm = (await request(s.url).get('/clusters/acme-again/api/v1/namespaces/app/configmaps/settings').expect(200)).body;
    assert.deepEqual(cm.data, { mode: 'slow' });
  });
});
