import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateX25519Identity, identityToRecipient } from 'age-encryption';
import request from 'supertest';
import { parseSnapshot } from '../../apps/api/src/snapshots/snapshot-format.js';
import { eventually } from '../support/eventually.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const A = '/clusters/acme';
const PLAINTEXT = 'correct-horse-battery-staple';
/** Every two seconds: the test waits for runs, it never asserts when they happen. */
const EVERY_2S = '*/2 * * * * *';

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

async function tenant(url: string, name: string): Promise<{ spec: Record<string, unknown>; status: { phase?: string; snapshots?: { location?: string; revision?: number; bytes?: number; objects?: number }; conditions?: Condition[] } }> {
  return (await request(url).get(`${TENANTS}/${name}`).expect(200)).body;
}

async function condition(url: string, name: string, type: string): Promise<Condition | undefined> {
  return (await tenant(url, name)).status.conditions?.find((c) => c.type === type);
}

async function createTenant(url: string, name: string, spec: Record<string, unknown>): Promise<void> {
  await request(url).post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name }, spec }).expect(201);
  await eventually(async () => (await tenant(url, name)).status.phase === 'Active', { message: `tenant ${name} Active` });
}

/** The value of one sample (`name{labels}` exactly, or `name` alone), undefined when absent. */
async function metric(url: string, sample: string): Promise<number | undefined> {
  const text = (await request(url).get('/metrics').expect(200)).text;
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

describe('scheduled tenant snapshots to a directory, and Tenant.spec.source', { timeout: 170_000 }, () => {
  let s: TestServer;
  let dir: string;
  let identity: string;
  let recipient: string;
  let cmUid: string;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'plinth-snapshot-dir-'));
    s = await startTestServer('tenant-snapshot-schedule', { PLINTH_SNAPSHOT_DIR: dir, PLINTH_SNAPSHOT_KEEP: '5' });
    identity = await generateX25519Identity();
    recipient = await identityToRecipient(identity);
    await createTenant(s.url, 'acme', { owners: [{ kind: 'User', name: 'alice' }] });
    await request(s.url).post(`${A}/api/v1/namespaces`).send({ metadata: { name: 'app' } }).expect(201);
    cmUid = (await request(s.url).post(`${A}/api/v1/namespaces/app/configmaps`).send({ metadata: { name: 'settings' }, data: { mode: 'fast' } }).expect(201)).body.metadata.uid;
    await request(s.url).post(`${A}/api/v1/namespaces/app/secrets`).send({ metadata: { name: 'db' }, stringData: { password: PLAINTEXT } }).expect(201);
  });
  after(async () => {
    await s?.close();
  });

  it('refuses a Tenant with a schedule that is not cron, a bad keep or recipient, or a source outside the target (422)', async () => {
    const bad = async (spec: Record<string, unknown>, field: string) => {
      const res = await request(s.url).post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'bad' }, spec });
      assert.equal(res.status, 422, JSON.stringify(res.body));
      assert.equal(res.body.reason, 'Invalid');
      assert.ok((res.body.details.causes as Array<{ field: string }>).some((c) => c.field === field), `${field} named: ${JSON.stringify(res.body.details.causes)}`);
    };
    await bad({ snapshots: { schedule: 'every minute' } }, 'spec.snapshots.schedule');
    await bad({ snapshots: { schedule: '61 * * * *' } }, 'spec.snapshots.schedule');
    await bad({ snapshots: { schedule: '* * * *' } }, 'spec.snapshots.schedule');
    await bad({ snapshots: { schedule: '0 * * * *', keep: 0 } }, 'spec.snapshots.keep');
    await bad({ snapshots: { recipients: ['not-a-key'] } }, 'spec.snapshots.recipients[0]');
    await bad({ source: { snapshot: '../../etc/passwd' } }, 'spec.source.snapshot');
    await bad({ source: { snapshot: 'acme/x.snapshot', identitySecretRef: { name: 'k' } } }, 'spec.source.identitySecretRef.namespace');
    await request(s.url).get(`${TENANTS}/bad`).expect(404);
  });

  it('takes snapshots on the tenant\'s schedule, seals its Secrets, keeps the newest N and reports them in status and metrics', async () => {
    await request(s.url)
      .patch(`${TENANTS}/acme`)
      .set('Content-Type', 'application/merge-patch+json')
      .send({ spec: { snapshots: { schedule: EVERY_2S, keep: 2, recipients: [recipient] } } })
      .expect(200);
    const seen = new Set<string>();
    const first = await eventually(
      async () => {
        const t = await tenant(s.url, 'acme');
        const c = t.status.conditions?.find((x) => x.type === 'SnapshotSucceeded');
        return c?.status === 'True' && t.status.snapshots?.location ? t.status.snapshots : false;
      },
      { message: 'a first scheduled snapshot', timeoutMs: 60_000 },
    );
    seen.add(first.location!);
    const bytes = readFileSync(path.join(dir, ...first.location!.split('/')));
    assert.equal(bytes.length, first.bytes);
    const parsed = parseSnapshot(bytes);
    assert.equal(parsed.header.tenant.name, 'acme');
    assert.equal(parsed.header.revision, first.revision);
    assert.equal(parsed.records.length, first.objects);
    assert.ok(parsed.records.some((r) => r.resource === 'configmaps' && r.name === 'settings'));
    assert.deepEqual(parsed.header.secrets, { scheme: 'age-x25519', recipients: [recipient] });
    assert.ok(!bytes.includes(PLAINTEXT) && !bytes.includes(Buffer.from(PLAINTEXT).toString('base64')), 'the Secret is not in the clear');

    const lastSuccess1 = await metric(s.url, 'plinth_snapshot_last_success_timestamp_seconds{tenant="acme"}');
    const written1 = await metric(s.url, 'plinth_snapshot_bytes_total');
    assert.ok(lastSuccess1 !== undefined && lastSuccess1 > 0, 'last success timestamp reported');
    assert.ok(written1 !== undefined && written1 >= first.bytes!, 'bytes written counted');
    // Four more snapshots: with keep 2, the older ones are deleted.
    await eventually(
      async () => {
        const loc = (await tenant(s.url, 'acme')).status.snapshots?.location;
        if (loc) seen.add(loc);
        return seen.size >= 5;
      },
      { message: 'five scheduled snapshots', timeoutMs: 90_000, intervalMs: 200 },
    );
    await request(s.url).patch(`${TENANTS}/acme`).set('Content-Type', 'application/merge-patch+json').send({ spec: { snapshots: { suspend: true } } }).expect(200);
    // Once a run in progress (if any) has ended, the schedule is off.
    const settled = await eventually(async () => ((await condition(s.url, 'acme', 'SnapshotSucceeded'))?.status === 'True' ? (await tenant(s.url, 'acme')).status.snapshots! : false), {
      message: 'the last run ended',
      timeoutMs: 30_000,
    });
    const files = readdirSync(path.join(dir, 'acme')).sort();
    assert.equal(files.length, 2, `two kept: ${files.join(', ')}`);
    assert.ok(files.includes(path.basename(settled.location!)), 'the newest is kept');
    assert.ok(!files.includes(path.basename(first.location!)), 'the first was deleted');
    const lastSuccess2 = await metric(s.url, 'plinth_snapshot_last_success_timestamp_seconds{tenant="acme"}');
    assert.ok(lastSuccess2! > lastSuccess1!, 'the last success timestamp moved on');
    assert.ok((await metric(s.url, 'plinth_snapshot_bytes_total'))! > written1!, 'bytes written grew');
    assert.ok((await metric(s.url, 'plinth_snapshot_deleted_total'))! >= 3, 'older snapshots deleted');
    assert.ok((await metric(s.url, 'plinth_snapshot_duration_seconds_count{result="success"}'))! >= 5, 'durations observed');
    assert.ok((await metric(s.url, 'plinth_snapshot_objects_total'))! >= 5 * first.objects!, 'objects counted');
    assert.equal(await metric(s.url, 'plinth_snapshot_last_objects{tenant="acme"}'), settled.objects);

    const list = (await request(s.url).get(`${TENANTS}/acme/snapshots`).expect(200)).body;
    assert.equal(list.kind, 'TenantSnapshotList');
    assert.equal(list.target, dir);
    assert.deepEqual(
      list.items.map((i: { location: string }) => i.location),
      files.map((f) => `acme/${f}`).reverse(),
      'newest first',
    );
  });

  it('reports a failed snapshot as a False condition and a failure metric (Secrets and no recipient)', async () => {
    await createTenant(s.url, 'globex', { snapshots: { schedule: EVERY_2S } });
    await request(s.url).post('/clusters/globex/api/v1/namespaces/default/secrets').send({ metadata: { name: 'k' }, stringData: { k: 'v' } }).expect(201);
    const c = await eventually(async () => {
      const x = await condition(s.url, 'globex', 'SnapshotSucceeded');
      return x?.status === 'False' ? x : false;
    }, { message: 'a failed snapshot', timeoutMs: 60_000 });
    assert.equal(c.reason, 'NoRecipient');
    assert.match(c.message, /recipient/);
    assert.ok((await metric(s.url, 'plinth_snapshot_failures_total{tenant="globex"}'))! >= 1);
    await request(s.url).delete(`${TENANTS}/globex`).expect((r) => assert.ok(r.status < 300));
  });

  it('restores a new tenant from spec.source: the snapshot in the target, opened with the identity in a platform Secret', async () => {
    const location = (await tenant(s.url, 'acme')).status.snapshots!.location!;
    await request(s.url).post('/api/v1/namespaces').send({ metadata: { name: 'backups' } }).expect((r) => assert.ok(r.status === 201 || r.status === 409));
    await request(s.url).post('/api/v1/namespaces/backups/secrets').send({ metadata: { name: 'snapshot-key' }, stringData: { identity: `# key\n${identity}\n` } }).expect(201);
    await createTenant(s.url, 'acme-copy', { source: { snapshot: location, identitySecretRef: { namespace: 'backups', name: 'snapshot-key' } } });
    const c = await eventually(async () => {
      const x = await condition(s.url, 'acme-copy', 'SourceRestored');
      return x && x.status !== 'Unknown' ? x : false;
    }, { message: 'the restore from spec.source', timeoutMs: 60_000 });
    assert.equal(c.status, 'True', c.message);
    assert.equal(c.reason, 'Restored');
    const cm = (await request(s.url).get('/clusters/acme-copy/api/v1/namespaces/app/configmaps/settings').expect(200)).body;
    assert.equal(cm.metadata.uid, cmUid, 'same uid');
    assert.deepEqual(cm.data, { mode: 'fast' });
    const secret = (await request(s.url).get('/clusters/acme-copy/api/v1/namespaces/app/secrets/db').expect(200)).body;
    assert.equal(Buffer.from(secret.data.password, 'base64').toString(), PLAINTEXT);
    assert.ok((await metric(s.url, 'plinth_snapshot_restores_total{result="success"}'))! >= 1);
    // What a tenant was restored from cannot change.
    const res = await request(s.url).patch(`${TENANTS}/acme-copy`).set('Content-Type', 'application/merge-patch+json').send({ spec: { source: { snapshot: 'acme/other.snapshot' } } });
    assert.equal(res.status, 422, JSON.stringify(res.body));
  });

  it('reports a missing snapshot, a missing identity and a damaged snapshot as a failed SourceRestored condition', async () => {
    const location = (await tenant(s.url, 'acme')).status.snapshots!.location!;
    const failed = async (name: string, source: Record<string, unknown>, reason: string, pattern: RegExp) => {
      await createTenant(s.url, name, { source });
      const c = await eventually(async () => {
        const x = await condition(s.url, name, 'SourceRestored');
        return x?.status === 'False' ? x : false;
      }, { message: `${name}'s restore to fail`, timeoutMs: 60_000 });
      assert.equal(c.reason, reason, c.message);
      assert.match(c.message, pattern);
      // Nothing of the snapshot was written.
      await request(s.url).get(`/clusters/${name}/api/v1/namespaces/app`).expect(404);
    };
    await failed('from-nowhere', { snapshot: 'acme/nope.snapshot' }, 'SnapshotNotFound', /no snapshot acme\/nope\.snapshot/);
    await failed('no-identity', { snapshot: location }, 'IdentityNotFound', /identitySecretRef/);
    await failed('wrong-key', { snapshot: location, identitySecretRef: { namespace: 'backups', name: 'missing' } }, 'IdentityNotFound', /Secret backups\/missing/);
    // A copy of the snapshot with one byte of its records changed.
    const bytes = readFileSync(path.join(dir, ...location.split('/')));
    const at = bytes.indexOf('"settings"') + 2;
    bytes[at] = bytes[at] === 0x65 ? 0x66 : 0x65;
    writeFileSync(path.join(dir, 'acme', 'damaged.snapshot'), bytes);
    await failed('from-damaged', { snapshot: 'acme/damaged.snapshot', identitySecretRef: { namespace: 'backups', name: 'snapshot-key' } }, 'InvalidSnapshot', /sha-?256|damaged|digest/i);
    assert.ok((await metric(s.url, 'plinth_snapshot_restores_total{result="failure"}'))! >= 4);
  });
});
