import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { generateX25519Identity, identityToRecipient } from 'age-encryption';
import request from 'supertest';
import { runTenantCli } from '../../apps/api/src/cli/tenant.cli.js';
import { parseSnapshot, SNAPSHOT_MEDIA_TYPE } from '../../apps/api/src/snapshots/snapshot-format.js';
import { certificateIdentity, requestAs } from '../support/credentials.js';
import { eventually } from '../support/eventually.js';
import { writeTestKubeconfig } from '../support/kubectl.js';
import { TestPostgres } from '../support/test-postgres.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { query, waitShardReady } from '../shards/support/shards.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const A = '/clusters/acme';
const PLAINTEXT = 'hunter2-very-secret-value';

/** Collects a binary answer (supertest parses only JSON and text). */
function binary(res: NodeJS.ReadableStream & { setEncoding?: unknown }, done: (err: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => done(null, Buffer.concat(chunks)));
}

async function exportBytes(url: string, path: string): Promise<{ status: number; body: Buffer; revision: number }> {
  const res = await request(url).get(path).buffer(true).parse(binary as never);
  return { status: res.status, body: res.body as Buffer, revision: Number(res.headers['x-plinth-snapshot-revision']) };
}

async function createTenant(url: string, name: string, spec: Record<string, unknown> = {}): Promise<void> {
  await request(url)
    .post(TENANTS)
    .send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name }, spec: { owners: [{ kind: 'User', name: 'alice' }], ...spec } })
    .expect(201);
  await eventually(async () => (await request(url).get(`${TENANTS}/${name}`)).body.status?.phase === 'Active', { message: `tenant ${name} Active` });
}

/** Runs the CLI in process with a kubeconfig of the platform administrator; `stdin` its input. */
async function cli(url: string, argv: string[], stdin: Buffer = Buffer.alloc(0)) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on('data', (c: Buffer) => out.push(c));
  stderr.on('data', (c: Buffer) => err.push(c));
  const code = await runTenantCli(argv, { KUBECONFIG: writeTestKubeconfig(url) }, { stdin: Readable.from([stdin]), stdout, stderr });
  return { code, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8') };
}

/** The objects of a resource in a tenant, by name (but the root CA ConfigMap): uid, ownerReferences' uids, data. */
async function objectsOf(url: string, path: string): Promise<Map<string, { uid: string; owners: string[]; data: unknown; labels: unknown }>> {
  const items = (await request(url).get(path).expect(200)).body.items as Array<{ metadata: { name: string; uid: string; ownerReferences?: Array<{ uid: string }>; labels?: unknown }; data?: unknown }>;
  // kube-root-ca.crt is each tenant's own (its publisher's, with the destination's CA): never restored.
  return new Map(items.filter((o) => o.metadata.name !== 'kube-root-ca.crt').map((o) => [o.metadata.name, { uid: o.metadata.uid, owners: (o.metadata.ownerReferences ?? []).map((r) => r.uid), data: o.data, labels: o.metadata.labels }]));
}

describe('tenant snapshots: export, import, clone', { timeout: 170_000 }, () => {
  let s: TestServer;
  let b: TestPostgres;
  let identity: string;
  let recipient: string;
  let identityFile: string;
  let ownerUid: string;

  before(async () => {
    b = await TestPostgres.start('snapshots_b');
    s = await startTestServer('tenant-snapshots', { PLINTH_SHARDS: `b=${b.url}` });
    await waitShardReady(s.url, 'b');
    // acme lives on the platform's shard; imports go to b.
    await createTenant(s.url, 'acme', { shard: 'default' });
    await createTenant(s.url, 'globex', { shard: 'default' });
    identity = await generateX25519Identity();
    recipient = await identityToRecipient(identity);
    const dir = mkdtempSync(path.join(tmpdir(), 'plinth-snapshots-'));
    identityFile = path.join(dir, 'key.txt');
    writeFileSync(identityFile, `# test identity\n${identity}\n`, { mode: 0o600 });
    await request(s.url).post(`${A}/api/v1/namespaces`).send({ metadata: { name: 'app' } }).expect(201);
    const owner = (await request(s.url).post(`${A}/api/v1/namespaces/app/configmaps`).send({ metadata: { name: 'owner', finalizers: ['example.com/keep'] }, data: { role: 'owner' } }).expect(201)).body;
    ownerUid = owner.metadata.uid;
    for (const name of ['dep-1', 'dep-2']) {
      await request(s.url)
        .post(`${A}/api/v1/namespaces/app/configmaps`)
        .send({ metadata: { name, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: ownerUid }] }, data: { role: 'dependent' } })
        .expect(201);
    }
    await request(s.url).post(`${A}/api/v1/namespaces/app/secrets`).send({ metadata: { name: 'db' }, stringData: { password: PLAINTEXT } }).expect(201);
  });
  after(async () => {
    await s?.close();
    await b?.close();
  });

  it('exports a snapshot consistent at its revision while 16 writers change the tenant', async () => {
    await request(s.url).post(`${A}/api/v1/namespaces`).send({ metadata: { name: 'busy' } }).expect(201);
    let stop = false;
    let writes = 0;
    const writers = Array.from({ length: 16 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const name = `w${w}-${Math.floor(i / 3) % 8}`;
        const path = `${A}/api/v1/namespaces/busy/configmaps`;
        // Create, update, delete in turn: the snapshot must catch each key in exactly its state at R.
        const r = i % 3 === 0 ? await request(s.url).post(path).send({ metadata: { name }, data: { i: String(i) } }) : i % 3 === 1 ? await request(s.url).put(`${path}/${name}`).send({ metadata: { name }, data: { i: String(i) } }) : await request(s.url).delete(`${path}/${name}`);
        if (r.status < 300) writes++;
        else stop = true;
      }
    });
    await eventually(() => writes > 100, { message: 'writers under way', timeoutMs: 60_000 });
    const snap = await exportBytes(s.url, `${TENANTS}/acme/snapshot?recipient=${recipient}`);
    const afterExport = writes;
    await eventually(() => writes > afterExport + 100, { message: 'writers went on during and after the export', timeoutMs: 60_000 });
    stop = true;
    await Promise.all(writers);
    assert.equal(snap.status, 200, snap.body.toString());
    const parsed = parseSnapshot(snap.body);
    assert.equal(parsed.header.revision, snap.revision);
    assert.equal(parsed.header.tenant.name, 'acme');
    const inSnapshot = new Map(parsed.records.filter((r) => r.resource === 'configmaps' && r.namespace === 'busy').map((r) => [r.name, r.object!]));
    // The state at R as the API lists it (exact revision, from the change log), long after R.
    const atR = (await request(s.url).get(`${A}/api/v1/namespaces/busy/configmaps?resourceVersion=${snap.revision}&resourceVersionMatch=Exact`).expect(200)).body;
    assert.equal(atR.metadata.resourceVersion, String(snap.revision));
    const listed = new Map((atR.items as Array<{ metadata: { name: string; resourceVersion: string; uid: string }; data: unknown }>).map((o) => [o.metadata.name, o]));
    assert.ok(listed.size > 0);
    assert.deepEqual([...inSnapshot.keys()].sort(), [...listed.keys()].sort());
    for (const [name, o] of listed) {
      const got = inSnapshot.get(name)!;
      assert.equal((got.metadata as { resourceVersion: string }).resourceVersion, o.metadata.resourceVersion, name);
      assert.equal((got.metadata as { uid: string }).uid, o.metadata.uid, name);
      assert.deepEqual(got.data, o.data, name);
      assert.ok(Number(o.metadata.resourceVersion) <= snap.revision);
    }
    // Every resource type of the tenant: namespaces, RBAC from provisioning, Secrets (sealed).
    const resources = new Set(parsed.records.map((r) => r.resource));
    for (const r of ['namespaces', 'configmaps', 'secrets', 'rbac.authorization.k8s.io/clusterroles']) assert.ok(resources.has(r), `${r} in ${[...resources].join(',')}`);
  });

  it('never writes a Secret in the clear: sealed to the recipient named, and refused without one', async () => {
    const snap = await exportBytes(s.url, `${TENANTS}/acme/snapshot?recipient=${recipient}`);
    assert.equal(snap.status, 200);
    const text = snap.body.toString('latin1');
    assert.ok(!text.includes(PLAINTEXT));
    assert.ok(!text.includes(Buffer.from(PLAINTEXT).toString('base64')));
    const parsed = parseSnapshot(snap.body);
    assert.deepEqual(parsed.header.secrets, { scheme: 'age-x25519', recipients: [recipient] });
    const secret = parsed.records.find((r) => r.resource === 'secrets' && r.name === 'db')!;
    assert.equal(secret.object, undefined);
    assert.match(secret.sealed!, /^[A-Za-z0-9+/]+=*$/);
    const refused = await request(s.url).get(`${TENANTS}/acme/snapshot`).expect(400);
    assert.match(refused.body.message, /holds Secrets: name at least one recipient/);
    const bad = await request(s.url).get(`${TENANTS}/acme/snapshot?recipient=age1nope`).expect(400);
    assert.match(bad.body.message, /not an age X25519 public key/);
  });

  it('exports the state at a past time (--at RFC 3339) and refuses a malformed point', async () => {
    await request(s.url).post(`${A}/api/v1/namespaces/app/configmaps`).send({ metadata: { name: 'before' } }).expect(201);
    await new Promise((r) => setTimeout(r, 1100));
    const at = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 1100));
    await request(s.url).post(`${A}/api/v1/namespaces/app/configmaps`).send({ metadata: { name: 'later' } }).expect(201);
    const out = await cli(s.url, ['export', 'acme', '--at', at, '--recipient', recipient]);
    assert.equal(out.code, 0, out.stderr);
    const names = parseSnapshot(out.stdout).records.filter((r) => r.namespace === 'app' && r.resource === 'configmaps').map((r) => r.name);
    assert.ok(names.includes('before'));
    assert.ok(!names.includes('later'));
    await request(s.url).get(`${TENANTS}/acme/snapshot?at=yesterday`).expect(400);
  });

  it('imports into a new tenant on another shard with the same objects, uids and owner links, and GC works on them', async () => {
    const exported = await cli(s.url, ['export', 'acme', '--recipient', recipient]);
    assert.equal(exported.code, 0, exported.stderr);
    assert.match(exported.stderr, /exported \d+ objects/);
    const imported = await cli(s.url, ['import', 'acme-copy', '--shard', 'b', '--identity', identityFile], exported.stdout);
    assert.equal(imported.code, 0, imported.stderr);
    const t = (await request(s.url).get(`${TENANTS}/acme-copy`).expect(200)).body;
    assert.equal(t.status.shard, 'b');
    const [rows] = await query<{ n: string }>(b.url, "SELECT count(*) AS n FROM objects WHERE tenant = 'acme-copy'");
    assert.ok(Number(rows.n) > 0);
    const src = await objectsOf(s.url, `${A}/api/v1/namespaces/app/configmaps`);
    const dst = await objectsOf(s.url, `/clusters/acme-copy/api/v1/namespaces/app/configmaps`);
    assert.deepEqual([...dst.keys()].sort(), [...src.keys()].sort());
    for (const [name, o] of src) assert.deepEqual(dst.get(name), o, name);
    const secret = (await request(s.url).get('/clusters/acme-copy/api/v1/namespaces/app/secrets/db').expect(200)).body;
    assert.equal(Buffer.from(secret.data.password, 'base64').toString(), PLAINTEXT);
    const owner = (await request(s.url).get('/clusters/acme-copy/api/v1/namespaces/app/configmaps/owner').expect(200)).body;
    assert.equal(owner.metadata.uid, ownerUid);
    assert.deepEqual(owner.metadata.finalizers, ['example.com/keep']);
    // New resourceVersions from the destination's own sequence, not the source's.
    const [{ rv }] = await query<{ rv: string }>(b.url, "SELECT max(revision) AS rv FROM objects WHERE tenant = 'acme-copy'");
    assert.ok(Number(owner.metadata.resourceVersion) <= Number(rv));
    // GC: the owner goes (its finalizer removed), its dependents follow.
    await request(s.url).patch('/clusters/acme-copy/api/v1/namespaces/app/configmaps/owner').set('Content-Type', 'application/merge-patch+json').send({ metadata: { finalizers: null } }).expect(200);
    await request(s.url).delete('/clusters/acme-copy/api/v1/namespaces/app/configmaps/owner').expect(200);
    await eventually(async () => (await request(s.url).get('/clusters/acme-copy/api/v1/namespaces/app/configmaps/dep-1')).status === 404, { message: 'dependents collected' });
    await request(s.url).get(`${A}/api/v1/namespaces/app/configmaps/dep-1`).expect(200);
  });

  it('refuses a damaged or truncated snapshot with a clear Status and writes nothing', async () => {
    await createTenant(s.url, 'scratch');
    const count = async () => Number((await query<{ n: string }>(s.database.url, "SELECT count(*) AS n FROM objects WHERE tenant = 'scratch'"))[0].n);
    const before = await count();
    const exported = await cli(s.url, ['export', 'globex']);
    assert.equal(exported.code, 0, exported.stderr);
    const good = exported.stdout;
    const flipped = Buffer.from(good);
    const at = good.indexOf('"name"', Math.floor(good.length / 2));
    flipped[at + 1] = 'N'.charCodeAt(0);
    const damaged = await request(s.url).post(`${TENANTS}/scratch/snapshot`).set('Content-Type', SNAPSHOT_MEDIA_TYPE).send(flipped).expect(400);
    assert.match(damaged.body.message, /^invalid snapshot: .*damaged.*nothing was restored$/);
    const truncated = await request(s.url).post(`${TENANTS}/scratch/snapshot`).set('Content-Type', SNAPSHOT_MEDIA_TYPE).send(good.subarray(0, good.length - 40)).expect(400);
    assert.match(truncated.body.message, /truncated/);
    assert.equal(await count(), before);
    const viaCli = await cli(s.url, ['import', 'never', '--identity', identityFile], good.subarray(0, good.length - 1));
    assert.equal(viaCli.code, 1);
    assert.match(viaCli.stderr, /^plinth tenant import: invalid snapshot: .*truncated.*\n$/);
    await request(s.url).get(`${TENANTS}/never`).expect(404);
  });

  it('refuses to restore into a non-empty tenant (409) unless asked to replace', async () => {
    const snap = await cli(s.url, ['export', 'globex']);
    await request(s.url).post('/clusters/scratch/api/v1/namespaces/default/configmaps').send({ metadata: { name: 'mine' } }).expect(201);
    const refused = await request(s.url).post(`${TENANTS}/scratch/snapshot`).set('Content-Type', SNAPSHOT_MEDIA_TYPE).send(snap.stdout).expect(409);
    assert.match(refused.body.message, /tenant scratch is not empty/);
    await request(s.url).get('/clusters/scratch/api/v1/namespaces/default/configmaps/mine').expect(200);
    const replaced = await request(s.url).post(`${TENANTS}/scratch/snapshot?replace=true`).set('Content-Type', SNAPSHOT_MEDIA_TYPE).send(snap.stdout).expect(200);
    assert.equal(replaced.body.status, 'Success');
    await request(s.url).get('/clusters/scratch/api/v1/namespaces/default/configmaps/mine').expect(404);
  });

  it('clones a tenant into a new one with the CLI', async () => {
    const out = await cli(s.url, ['clone', 'acme', 'acme-clone']);
    assert.equal(out.code, 0, out.stderr);
    const src = await objectsOf(s.url, `${A}/api/v1/namespaces/app/configmaps`);
    const dst = await objectsOf(s.url, `/clusters/acme-clone/api/v1/namespaces/app/configmaps`);
    assert.deepEqual(dst, src);
    const failed = await cli(s.url, ['clone', 'nosuch', 'x']);
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /^plinth tenant clone: export of tenant nosuch: .*not found.*\(HTTP 404\)\n$/);
  });

  it('restores into another Plinth (its own database and revision sequence) when the caller holds the identity', async () => {
    const other = await startTestServer('tenant-snapshots-other');
    try {
      const exported = await cli(s.url, ['export', 'acme', '--recipient', recipient]);
      assert.equal(exported.code, 0, exported.stderr);
      const imported = await cli(other.url, ['import', 'acme', '--identity', identityFile], exported.stdout);
      assert.equal(imported.code, 0, imported.stderr);
      const src = await objectsOf(s.url, `${A}/api/v1/namespaces/app/configmaps`);
      const dst = await objectsOf(other.url, `${A}/api/v1/namespaces/app/configmaps`);
      assert.deepEqual(dst, src);
      const secret = (await request(other.url).get(`${A}/api/v1/namespaces/app/secrets/db`).expect(200)).body;
      assert.equal(Buffer.from(secret.data.password, 'base64').toString(), PLAINTEXT);
      // Without the identity, nothing is created there.
      const refused = await cli(other.url, ['import', 'acme-2'], exported.stdout);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /Secrets are sealed to age1\w+: give an identity/);
      await request(other.url).get(`${TENANTS}/acme-2`).expect(404);
    } finally {
      await other.close();
    }
  });

  it('lets a tenant owner export its own tenant, never another (403)', async () => {
    const alice = requestAs(s.url, await certificateIdentity('alice'));
    const own = await alice.get(`${A}/snapshot?recipient=${recipient}`).buffer(true).parse(binary as never).expect(200);
    assert.equal(parseSnapshot(own.body as Buffer).header.tenant.name, 'acme');
    const bob = requestAs(s.url, await certificateIdentity('bob'));
    await bob.get(`${A}/snapshot?recipient=${recipient}`).expect(403);
    await bob.get(`${TENANTS}/acme/snapshot?recipient=${recipient}`).expect(403);
    await createTenant(s.url, 'initech', { owners: [{ kind: 'User', name: 'carol' }] });
    await alice.get(`/clusters/initech/snapshot`).expect(403);
    await alice.get(`${TENANTS}/initech/snapshot`).expect(403);
    await alice.post(`${TENANTS}/initech/snapshot`).set('Content-Type', SNAPSHOT_MEDIA_TYPE).send(Buffer.from('x')).expect(403);
  });
});
