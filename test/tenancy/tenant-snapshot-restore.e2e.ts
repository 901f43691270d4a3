import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { runTenantCli } from '../../apps/api/src/cli/tenant.cli.js';
import { parseSnapshot, SNAPSHOT_MEDIA_TYPE, SnapshotWriter } from '../../apps/api/src/snapshots/snapshot-format.js';
import { certificateIdentity, type ClientIdentity, requestAs, tokenIdentity } from '../support/credentials.js';
import { eventually } from '../support/eventually.js';
import { writeTestKubeconfig } from '../support/kubectl.js';
import { grantClusterRole } from '../support/rbac.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { query } from '../shards/support/shards.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const CMS = (t: string, ns = 'default') => `/clusters/${t}/api/v1/namespaces/${ns}/configmaps`;
/** Objects of the large tenant: enough for many restore batches. */
const LARGE = 3000;

function binary(res: NodeJS.ReadableStream, done: (err: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => done(null, Buffer.concat(chunks)));
}

async function exportOf(url: string, tenant: string): Promise<Buffer> {
  const res = await request(url).get(`${TENANTS}/${tenant}/snapshot`).buffer(true).parse(binary as never);
  assert.equal(res.status, 200, String(res.body));
  return res.body as Buffer;
}

async function createTenant(url: string, name: string, spec: Record<string, unknown> = {}): Promise<string> {
  const created = await request(url)
    .post(TENANTS)
    .send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name }, spec: { owners: [{ kind: 'User', name: 'alice' }], ...spec } })
    .expect(201);
  await eventually(async () => (await request(url).get(`${TENANTS}/${name}`)).body.status?.phase === 'Active', { message: `tenant ${name} Active` });
  return created.body.metadata.uid as string;
}

async function cli(url: string, argv: string[], stdin: Buffer = Buffer.alloc(0), id?: ClientIdentity) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const err: Buffer[] = [];
  stdout.resume();
  stderr.on('data', (c: Buffer) => err.push(c));
  const code = await runTenantCli(argv, { KUBECONFIG: writeTestKubeconfig(url, id) }, { stdin: Readable.from([stdin]), stdout, stderr });
  stderr.end();
  await new Promise((r) => stderr.once('end', r));
  return { code, stderr: Buffer.concat(err).toString('utf8') };
}

/** A snapshot of a made-up tenant: namespace `bulk` and `n` ConfigMaps in it, one in ten owned by the first. */
function syntheticSnapshot(n: number): Buffer {
  const w = new SnapshotWriter();
  const lines = [w.header({ format: 'tenancy.plinth.dev/tenant-snapshot', version: 1, tenant: { name: 'made-up', uid: randomUUID(), spec: {} }, revision: 1, createdAt: new Date().toISOString(), secrets: { scheme: 'none' } })];
  lines.push(w.record({ resource: 'namespaces', namespace: '', name: 'bulk', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bulk', uid: randomUUID() }, spec: { finalizers: ['kubernetes'] } } }));
  const owner = randomUUID();
  for (let i = 0; i < n; i++) {
    const ownerReferences = i > 0 && i % 10 === 0 ? [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'cm-0', uid: owner }] : undefined;
    const metadata = { name: `cm-${i}`, namespace: 'bulk', uid: i === 0 ? owner : randomUUID(), ...(ownerReferences ? { ownerReferences } : {}) };
    lines.push(w.record({ resource: 'configmaps', namespace: 'bulk', name: `cm-${i}`, object: { apiVersion: 'v1', kind: 'ConfigMap', metadata, data: { v: `value-${i}-${'x'.repeat(200)}` } } }));
  }
  lines.push(w.trailer());
  return Buffer.concat(lines);
}

/** What a tenant holds, as the database has it: `resource ns/name uid` per object, sorted. */
async function holdings(dbUrl: string, tenant: string): Promise<string[]> {
  const rows = await query<{ k: string }>(dbUrl, "SELECT resource || ' ' || namespace || '/' || name || ' ' || coalesce(body -> 'metadata' ->> 'uid', '') AS k FROM objects WHERE tenant = $1 ORDER BY 1", [tenant]);
  return rows.map((r) => r.k);
}

async function changeRows(dbUrl: string, tenant: string): Promise<number> {
  return Number((await query<{ n: string }>(dbUrl, 'SELECT count(*) AS n FROM changes WHERE tenant = $1', [tenant]))[0].n);
}

describe('tenant snapshot restores: name reuse, tenant owners, atomicity', { timeout: 175_000 }, () => {
  let s: TestServer;
  let large: Buffer;

  before(async () => {
    s = await startTestServer('tenant-snapshot-restore');
    await createTenant(s.url, 'src');
    await request(s.url).post(CMS('src')).send({ metadata: { name: 'from-src' }, data: { k: 'v' } }).expect(201);
    // A large tenant, filled by a restore of a made-up snapshot, then exported as any tenant is.
    await createTenant(s.url, 'big');
    await request(s.url).post(`${TENANTS}/big/snapshot`).set('Content-Type', SNAPSHOT_MEDIA_TYPE).send(syntheticSnapshot(LARGE)).expect(200);
    large = await exportOf(s.url, 'big');
    assert.ok(parseSnapshot(large).records.length > LARGE);
  });
  after(async () => s?.close());

  it("restores into a re-created tenant of a deleted tenant's name with nothing of the old one: grants, tokens, cached decisions, objects", async () => {
    const oldUid = await createTenant(s.url, 'reused');
    await request(s.url).post('/clusters/reused/api/v1/namespaces/default/serviceaccounts').send({ metadata: { name: 'bot' } }).expect(201);
    await grantClusterRole(s.url, 'mallory-admin', 'cluster-admin', [{ kind: 'User', name: 'mallory' }], '/clusters/reused');
    await grantClusterRole(s.url, 'bot-admin', 'cluster-admin', [{ kind: 'ServiceAccount', name: 'bot', namespace: 'default' }], '/clusters/reused');
    const minted = await request(s.url)
      .post('/clusters/reused/api/v1/namespaces/default/serviceaccounts/bot/token')
      .send({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 48 * 3600 } })
      .expect(201);
    const bot = tokenIdentity(minted.body.status.token as string);
    const mallory = await certificateIdentity('mallory');
    const old = (await request(s.url).post(CMS('reused')).send({ metadata: { name: 'old' }, data: { of: 'the old tenant' } }).expect(201)).body;
    const oldRevision = Number(old.metadata.resourceVersion);
    // Both allowed once, so the authorizer's decisions and the verified token are cached.
    await eventually(async () => (await requestAs(s.url, mallory).get(CMS('reused'))).status === 200, { message: 'mallory reads reused' });
    await eventually(async () => (await requestAs(s.url, bot).get(CMS('reused'))).status === 200, { message: 'bot reads reused' });
    await new Promise((r) => setTimeout(r, 1100));
    const oldTime = new Date().toISOString();

    await request(s.url).delete(`${TENANTS}/reused`).expect(202);
    await eventually(async () => (await request(s.url).get(`${TENANTS}/reused`)).status === 404, { timeoutMs: 60_000, message: 'reused to be gone' });
    assert.notEqual(await createTenant(s.url, 'reused'), oldUid);
    const restored = await request(s.url).post(`${TENANTS}/reused/snapshot`).set('Content-Type', SNAPSHOT_MEDIA_TYPE).send(await exportOf(s.url, 'src')).expect(200);
    assert.equal(restored.body.status, 'Success');

    await request(s.url).get(`${CMS('reused')}/from-src`).expect(200);
    await request(s.url).get(`${CMS('reused')}/old`).expect(404);
    await request(s.url).get('/clusters/reused/api/v1/namespaces/default/serviceaccounts/bot').expect(404);
    for (const name of ['mallory-admin', 'bot-admin']) await request(s.url).get(`/clusters/reused/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${name}`).expect(404);
    const asMallory = await requestAs(s.url, mallory).get(CMS('reused'));
    assert.equal(asMallory.status, 403, JSON.stringify(asMallory.body));
    const asBot = await requestAs(s.url, bot).get(CMS('reused'));
    assert.equal(asBot.status, 401, JSON.stringify(asBot.body));

    // History cannot reach back across the deletion and re-creation: 410 naming where the new tenant's history starts.
    const byRevision = await request(s.url)
      .post(`${TENANTS}/reused/restore`)
      .send({ at: String(oldRevision), objects: [{ resource: 'configmaps', namespace: 'default', name: 'old' }] })
      .expect(410);
    assert.equal(byRevision.body.reason, 'Expired');
    assert.match(byRevision.body.message, /tenant reused was created at revision \d+: revision \d+ is before it .*the oldest revision available is \d+/);
    const byTime = await request(s.url).post('/clusters/reused/restore').send({ at: oldTime, namespaces: ['default'] }).expect(410);
    assert.match(byTime.body.message, /oldest revision available is \d+/);
    const exported = await request(s.url).get(`${TENANTS}/reused/snapshot?resourceVersion=${oldRevision}`).expect(410);
    assert.match(exported.body.message, /was created at revision \d+/);
    const viaCli = await cli(s.url, ['restore', 'reused', '--at', String(oldRevision), 'configmaps/old', '-n', 'default']);
    assert.equal(viaCli.code, 1);
    assert.match(viaCli.stderr, /^plinth tenant restore: .*was created at revision \d+: revision \d+ is before it.*\(HTTP 410\)$/m);
    await request(s.url).get(`${CMS('reused')}/old`).expect(404);
  });

  it("lets a tenant's owner restore a snapshot of its own tenant, and refuses another tenant's owner (403)", async () => {
    await createTenant(s.url, 'solo');
    await createTenant(s.url, 'bobs', { owners: [{ kind: 'User', name: 'bob' }] });
    const alice = requestAs(s.url, await certificateIdentity('alice'));
    const bob = requestAs(s.url, await certificateIdentity('bob'));
    const keep = (await alice.post(CMS('solo')).send({ metadata: { name: 'keep' }, data: { k: 'v' } }).expect(201)).body;
    const snap = (await alice.get('/clusters/solo/snapshot').buffer(true).parse(binary as never).expect(200)).body as Buffer;
    await alice.delete(`${CMS('solo')}/keep`).expect(200);
    await alice.post(CMS('solo')).send({ metadata: { name: 'later' } }).expect(201);

    const post = (who: typeof alice, tenant: string, body: Buffer, q = '') => who.post(`/clusters/${tenant}/snapshot${q}`).set('Content-Type', SNAPSHOT_MEDIA_TYPE).send(body);
    // Another tenant's owner: refused by RBAC in this tenant, whatever the snapshot.
    const refused = await post(bob, 'solo', snap, '?replace=true').expect(403);
    assert.equal(refused.body.reason, 'Forbidden');
    await post(alice, 'bobs', snap, '?replace=true').expect(403);
    await bob.post(`${TENANTS}/solo/snapshot?replace=true`).set('Content-Type', SNAPSHOT_MEDIA_TYPE).send(snap).expect(403);
    await request(s.url).get(`${CMS('solo')}/later`).expect(200);
    // Its own member: a snapshot of another tenant is refused, its own restores (409 without replace: the tenant holds objects).
    const foreign = await post(alice, 'solo', await exportOf(s.url, 'src'), '?replace=true').expect(403);
    assert.match(foreign.body.message, /restore only snapshots of their own tenant/);
    await post(alice, 'solo', snap).expect(409);
    const ok = await post(alice, 'solo', snap, '?replace=true').expect(200);
    assert.equal(ok.body.status, 'Success');
    const back = (await alice.get(`${CMS('solo')}/keep`).expect(200)).body;
    assert.equal(back.metadata.uid, keep.metadata.uid);
    await alice.get(`${CMS('solo')}/later`).expect(404);
    // The CLI as the owner (it may not create Tenants): import into its own tenant through /clusters/solo/snapshot.
    await alice.post(CMS('solo')).send({ metadata: { name: 'again' } }).expect(201);
    const imported = await cli(s.url, ['import', 'solo', '--replace'], snap, await certificateIdentity('alice'));
    assert.equal(imported.code, 0, imported.stderr);
    await alice.get(`${CMS('solo')}/again`).expect(404);
    const bobCli = await cli(s.url, ['import', 'solo', '--replace'], snap, await certificateIdentity('bob'));
    assert.equal(bobCli.code, 1, bobCli.stderr);
    assert.match(bobCli.stderr, /\(HTTP 403\)\n$/);
  });

  it('writes nothing from a truncated or damaged snapshot of a large tenant', async () => {
    await createTenant(s.url, 'target');
    const before = await holdings(s.database.url, 'target');
    const changes = await changeRows(s.database.url, 'target');
    const post = (body: Buffer) => request(s.url).post(`${TENANTS}/target/snapshot`).set('Content-Type', SNAPSHOT_MEDIA_TYPE).send(body);
    // Cut in the middle of a line, cut at a line's end (no trailer), and one byte changed near the end.
    const midLine = large.subarray(0, Math.floor(large.length * 0.8));
    const atLineEnd = large.subarray(0, large.lastIndexOf('\n', Math.floor(large.length * 0.9)) + 1);
    const flipped = Buffer.from(large);
    const at = large.indexOf('value-', Math.floor(large.length * 0.95));
    flipped[at] = 'V'.charCodeAt(0);
    for (const [what, body, message] of [
      ['cut mid-line', midLine, /truncated: line \d+ has no end/],
      ['cut at a line end', atLineEnd, /truncated: no trailer after \d+ records/],
      ['one byte changed', flipped, /SHA-256 does not match/],
    ] as const) {
      const res = await post(body).expect(400);
      assert.match(res.body.message, message, what);
      assert.match(res.body.message, /nothing was restored$/, what);
    }
    assert.deepEqual(await holdings(s.database.url, 'target'), before);
    assert.equal(await changeRows(s.database.url, 'target'), changes);
    // The whole snapshot restores into that same tenant afterwards.
    await post(large).expect(200);
    assert.equal((await holdings(s.database.url, 'target')).filter((k) => k.startsWith('configmaps bulk/cm-')).length, LARGE);
  });

  it('leaves the tenant as it was when a restore fails half-way (a tenant limit reached after many batches)', async () => {
    await createTenant(s.url, 'limited', { limits: { objectsPerResource: { configmaps: LARGE / 2 } } });
    const before = await holdings(s.database.url, 'limited');
    const changes = await changeRows(s.database.url, 'limited');
    const res = await request(s.url).post(`${TENANTS}/limited/snapshot`).set('Content-Type', SNAPSHOT_MEDIA_TYPE).send(large).expect(403);
    assert.match(res.body.message, /exceeded tenant limit: limited.*count\/configmaps.*nothing was restored \(the \d+ objects written before the failure were removed again/);
    // It did fail half-way: it had written (and removed again) many objects.
    assert.ok((await changeRows(s.database.url, 'limited')) - changes > LARGE / 2, 'the restore wrote before it failed');
    // Same objects, same uids (what it had replaced, the tenant's own roles and bindings, put back).
    assert.deepEqual(await holdings(s.database.url, 'limited'), before);
    const usage = await query<{ objects: string }>(s.database.url, "SELECT objects FROM tenant_usage WHERE tenant = 'limited' AND usage_key = 'configmaps'");
    assert.ok(Number(usage[0]?.objects ?? 0) < 10, `configmaps counted after the undo: ${usage[0]?.objects}`);
  });
});
