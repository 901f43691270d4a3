import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { parse } from 'yaml';
import { ObjectListRepository } from '@plinth/storage';
import { PLATFORM_TENANT, TENANT_STORAGE_RESOURCE } from '../../apps/api/src/kinds/tenant/tenant-api.js';
import { writeKubeconfig } from '../../apps/api/src/pki/kubeconfig.writer.js';
import { KubeconfigRefresher } from '../../apps/api/src/startup/kubeconfig-refresher.js';
import { OBSERVE_CHANGES, type ObserveChanges } from '../../apps/api/src/watch/observe-changes.js';
import { adminIdentity, certificateIdentity } from '../support/credentials.js';
import { eventually } from '../support/eventually.js';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { pino } from 'pino';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../apps/api/src/cli/kubeconfig.main.js');

function runCli(args: string[], cwd: string): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd, timeout: 60_000, env: { ...process.env, KUBECONFIG: '' } }, (err, _out, stderr) => {
      resolve({ code: err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0, stderr: String(stderr) });
    });
  });
}

const tenant = (name: string, owner: string) => ({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name }, spec: { owners: [{ kind: 'User', name: owner }] } });

// Kubeconfigs for tenant users without openssl (npm run kubeconfig), and contexts for tenants created after start-up.
describe('kubeconfigs for tenant users', { timeout: 180_000 }, () => {
  let s: TestServer;
  let dir: string;

  before(async () => {
    s = await startTestServer('tenant-kubeconfig');
    await request(s.url).post(TENANTS).send(tenant('acme', 'olivia')).expect(201);
    await eventually(async () => (await request(s.url).get('/clusters/acme/apis/certificates.k8s.io/v1/certificatesigningrequests')).status === 200, { timeoutMs: 30_000, message: 'acme is ready' });
    dir = mkdtempSync(path.join(tmpdir(), 'plinth-kubeconfig-cli-'));
  });
  after(async () => s?.close());

  it('lets the administrator issue a kubeconfig for alice of acme that works in acme only', async () => {
    const admin = writeTestKubeconfig(s.url, adminIdentity());
    const out = path.join(dir, 'alice.kubeconfig');
    const run = await runCli(['--tenant', 'acme', '--user', 'alice', '--group', 'devs', '--kubeconfig', admin, '--out', out], dir);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /approved/);
    const config = parse(readFileSync(out, 'utf8'));
    assert.equal(config['current-context'], 'alice@acme');
    assert.equal(config.clusters[0].cluster.server, `${s.url}/clusters/acme`);
    const who = await kubectl(out, ['auth', 'whoami', '-o', 'json']);
    assert.equal(who.code, 0, who.stderr);
    assert.deepEqual(JSON.parse(who.stdout).status.userInfo.groups, ['devs', 'system:authenticated']);
    const elsewhere = await kubectl(out, ['--server', s.url, 'get', 'namespaces']);
    assert.notEqual(elsewhere.code, 0);
    assert.match(elsewhere.stderr, /Unauthorized|provide credentials/);
  });

  it("lets a tenant owner do the same, and tells a user who may not approve to ask an approver", async () => {
    const owner = writeTestKubeconfig(`${s.url}/clusters/acme`, await certificateIdentity('olivia'));
    const out = path.join(dir, 'bob.kubeconfig');
    const run = await runCli(['--tenant', 'acme', '--user', 'bob', '--kubeconfig', owner, '--out', out, '--expiration-seconds', '3600'], dir);
    assert.equal(run.code, 0, run.stderr);
    assert.equal((await kubectl(out, ['auth', 'whoami'])).code, 0);
    // bob may not create requests: the CLI says what the server said.
    const refused = await runCli(['--tenant', 'acme', '--user', 'carol', '--kubeconfig', out, '--out', path.join(dir, 'carol.kubeconfig'), '--wait-seconds', '1'], dir);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /creating the CertificateSigningRequest: 403/);
    // Allowed to ask but not to approve: the CLI names the command an approver runs, and gives up after --wait-seconds.
    await request(s.url)
      .post('/clusters/acme/apis/rbac.authorization.k8s.io/v1/clusterroles')
      .send({ metadata: { name: 'csr-requester' }, rules: [{ apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests'], verbs: ['create', 'get'] }] })
      .expect(201);
    await request(s.url)
      .post('/clusters/acme/apis/rbac.authorization.k8s.io/v1/clusterrolebindings')
      .send({ metadata: { name: 'bob-requests' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'csr-requester' }, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'bob' }] })
      .expect(201);
    const waiting = await runCli(['--tenant', 'acme', '--user', 'carol', '--kubeconfig', out, '--out', path.join(dir, 'carol.kubeconfig'), '--wait-seconds', '1'], dir);
    assert.equal(waiting.code, 1);
    assert.match(waiting.stderr, /you may not approve it; waiting for an approver: kubectl certificate approve carol-/);
    assert.match(waiting.stderr, /was not issued in time/);
    const usage = await runCli(['--tenant', 'acme'], dir);
    assert.equal(usage.code, 2);
  });

  it('gives the administrator kubeconfig a context for a tenant created after start-up', async () => {
    const lists = s.app.get(ObjectListRepository);
    const refresher = new KubeconfigRefresher({
      tenants: async () => (await lists.list({ tenant: PLATFORM_TENANT, resource: TENANT_STORAGE_RESOURCE })).items.map((i) => i.key.name),
      write: (tenants) => writeKubeconfig(dir, s.url, tenants, { caPem: s.pki.caPem, clientCertPem: s.pki.admin.certPem, clientKeyPem: s.pki.admin.keyPem }),
      tenantResource: TENANT_STORAGE_RESOURCE,
      observe: s.app.get<symbol, ObserveChanges>(OBSERVE_CHANGES),
      logger: pino({ level: 'silent' }),
    });
    refresher.start();
    try {
      await refresher.idle();
      const contexts = () => parse(readFileSync(path.join(dir, 'kubeconfig'), 'utf8')).contexts.map((c: { name: string }) => c.name);
      assert.ok(contexts().includes('plinth-acme'));
      assert.ok(!contexts().includes('plinth-initech'));
      await request(s.url).post(TENANTS).send(tenant('initech', 'olivia')).expect(201);
      await eventually(() => contexts().includes('plinth-initech'), { timeoutMs: 30_000, message: 'a context for initech' });
      const used = await kubectl(path.join(dir, 'kubeconfig'), ['--context', 'plinth-initech', 'auth', 'whoami']);
      assert.equal(used.code, 0, used.stderr);
    } finally {
      await refresher.stop();
    }
  });
});
