import assert from 'node:assert/strict';
import { PassThrough, Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { runTenantCli } from '../../apps/api/src/cli/tenant.cli.js';
import { adminIdentity, certificateIdentity, type ClientIdentity, requestAs } from '../support/credentials.js';
import { eventually } from '../support/eventually.js';
import { writeTestKubeconfig } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const A = '/clusters/acme';
const DOOMED = `${A}/api/v1/namespaces/doomed`;

async function cli(url: string, argv: string[], id: ClientIdentity = adminIdentity()) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const err: Buffer[] = [];
  stderr.on('data', (c: Buffer) => err.push(c));
  stdout.resume();
  const code = await runTenantCli(argv, { KUBECONFIG: writeTestKubeconfig(url, id) }, { stdin: Readable.from([]), stdout, stderr });
  return { code, stderr: Buffer.concat(err).toString('utf8') };
}

describe('restoring a live tenant\'s namespaces and objects from the change history', { timeout: 170_000 }, () => {
  let s: TestServer;

  before(async () => {
    s = await startTestServer('tenant-history-restore');
    await request(s.url)
      .post(TENANTS)
      .send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'acme' }, spec: { owners: [{ kind: 'User', name: 'alice' }] } })
      .expect(201);
    await eventually(async () => (await request(s.url).get(`${TENANTS}/acme`)).body.status?.phase === 'Active', { message: 'acme Active' });
  });
  after(async () => s?.close());

  it('brings a namespace deleted under load back whole: its objects, uids, owner links and Secrets, and GC works on them', async () => {
    await request(s.url).post(`${A}/api/v1/namespaces`).send({ metadata: { name: 'doomed' } }).expect(201);
    await request(s.url).post(`${A}/api/v1/namespaces`).send({ metadata: { name: 'busy' } }).expect(201);
    const ns = (await request(s.url).get(DOOMED).expect(200)).body;
    const owner = (await request(s.url).post(`${DOOMED}/configmaps`).send({ metadata: { name: 'owner' }, data: { v: '1' } }).expect(201)).body;
    const ref = [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid }];
    const deps = [];
    for (const name of ['dep-1', 'dep-2']) deps.push((await request(s.url).post(`${DOOMED}/configmaps`).send({ metadata: { name, ownerReferences: ref } }).expect(201)).body);
    await request(s.url).post(`${DOOMED}/secrets`).send({ metadata: { name: 'creds' }, stringData: { token: 's3cret' } }).expect(201);
    const role = (await request(s.url).post(`${A}/apis/rbac.authorization.k8s.io/v1/namespaces/doomed/roles`).send({ metadata: { name: 'reader' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] }).expect(201)).body;
    const at = (await request(s.url).get(`${DOOMED}/configmaps`).expect(200)).body.metadata.resourceVersion as string;

    let stop = false;
    const writers = Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; !stop; i++) await request(s.url).post(`${A}/api/v1/namespaces/busy/configmaps`).send({ metadata: { name: `w${w}-${i}` } });
    });
    try {
      const deleted = await request(s.url).delete(DOOMED);
      assert.ok([200, 202].includes(deleted.status), String(deleted.status));
      await eventually(async () => (await request(s.url).get(DOOMED)).status === 404, { message: 'namespace doomed gone', timeoutMs: 60_000 });
      const out = await cli(s.url, ['restore', 'acme', '--at', at, 'namespace/doomed']);
      assert.equal(out.code, 0, out.stderr);
      assert.match(out.stderr, /restored \d+ objects of tenant acme as they were at revision \d+ \(namespace doomed\)/);
    } finally {
      stop = true;
      await Promise.all(writers);
    }
    const back = (await request(s.url).get(DOOMED).expect(200)).body;
    assert.equal(back.metadata.uid, ns.metadata.uid);
    assert.equal(back.status.phase, 'Active');
    assert.ok(Number(back.metadata.resourceVersion) > Number(at));
    const cms = (await request(s.url).get(`${DOOMED}/configmaps`).expect(200)).body.items as Array<{ metadata: { name: string; uid: string; ownerReferences?: unknown } }>;
    const byName = new Map(cms.map((c) => [c.metadata.name, c]));
    assert.equal(byName.get('owner')?.metadata.uid, owner.metadata.uid);
    for (const d of deps) {
      assert.equal(byName.get(d.metadata.name)?.metadata.uid, d.metadata.uid);
      assert.deepEqual(byName.get(d.metadata.name)?.metadata.ownerReferences, ref);
    }
    const secret = (await request(s.url).get(`${DOOMED}/secrets/creds`).expect(200)).body;
    assert.equal(Buffer.from(secret.data.token, 'base64').toString(), 's3cret');
    assert.equal((await request(s.url).get(`${A}/apis/rbac.authorization.k8s.io/v1/namespaces/doomed/roles/reader`).expect(200)).body.metadata.uid, role.metadata.uid);
    // The namespace stays (nothing deletes it again), and GC follows the restored owner links.
    await request(s.url).delete(`${DOOMED}/configmaps/owner`).expect(200);
    await eventually(async () => (await request(s.url).get(`${DOOMED}/configmaps/dep-1`)).status === 404 && (await request(s.url).get(`${DOOMED}/configmaps/dep-2`)).status === 404, { message: 'dependents collected' });
    await request(s.url).get(`${DOOMED}/secrets/creds`).expect(200);
  });

  it('brings one object back as it was at a time, replacing its later state; a tenant owner may, another user may not', async () => {
    const path = `${A}/api/v1/namespaces/default/configmaps`;
    const solo = (await request(s.url).post(path).send({ metadata: { name: 'solo' }, data: { v: 'then' } }).expect(201)).body;
    await new Promise((r) => setTimeout(r, 1100));
    const at = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 1100));
    await request(s.url).put(`${path}/solo`).send({ metadata: { name: 'solo' }, data: { v: 'later' } }).expect(200);
    const alice = await certificateIdentity('alice');
    const out = await cli(s.url, ['restore', 'acme', '--at', at, 'configmaps/solo', '-n', 'default'], alice);
    assert.equal(out.code, 0, out.stderr);
    const back = (await request(s.url).get(`${path}/solo`).expect(200)).body;
    assert.deepEqual(back.data, { v: 'then' });
    assert.equal(back.metadata.uid, solo.metadata.uid);
    const bob = requestAs(s.url, await certificateIdentity('bob'));
    await bob.post(`${A}/restore`).send({ at, objects: [{ resource: 'configmaps', namespace: 'default', name: 'solo' }] }).expect(403);
    await bob.post(`${TENANTS}/acme/restore`).send({ at, objects: [{ resource: 'configmaps', namespace: 'default', name: 'solo' }] }).expect(403);
  });

  it('answers 410 naming the oldest revision beyond the kept history, and 400 for what did not exist then', async () => {
    const old = await cli(s.url, ['restore', 'acme', '--at', '2001-01-01T00:00:00Z', 'namespace/doomed']);
    assert.equal(old.code, 1);
    assert.match(old.stderr, /^plinth tenant restore: restore of tenant acme: .*oldest revision available is \d+ \(HTTP 410\)\n$/m);
    const now = (await request(s.url).get(`${A}/api/v1/namespaces/default/configmaps`).expect(200)).body.metadata.resourceVersion as string;
    const missing = await request(s.url).post(`${TENANTS}/acme/restore`).send({ at: now, objects: [{ resource: 'configmaps', namespace: 'default', name: 'nosuch' }] }).expect(400);
    assert.match(missing.body.message, /configmaps default\/nosuch did not exist at revision \d+/);
    const kind = await request(s.url).post(`${TENANTS}/acme/restore`).send({ at: now, objects: [{ resource: 'gizmos.example.com', name: 'x' }] }).expect(400);
    assert.match(kind.body.message, /doesn't have a resource type "gizmos.example.com"/);
    await request(s.url).post(`${TENANTS}/acme/restore`).send({ namespaces: ['doomed'] }).expect(400);
    const usage = await cli(s.url, ['restore', 'acme', 'namespace/doomed']);
    assert.equal(usage.code, 2);
  });
});
