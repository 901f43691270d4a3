import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { certificateIdentity, type ClientIdentity, requestAs, tokenIdentity } from '../support/credentials.js';
import { eventually } from '../support/eventually.js';
import { grantClusterRole } from '../support/rbac.js';
import { TestCluster } from '../watch/support/cluster.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const tenant = (name: string) => ({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name } });
const secret = (name: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: { password: `of ${name}` } });
const SECRETS = (t: string) => `/clusters/${t}/api/v1/namespaces/default/secrets`;

/**
 * A tenant deleted and created again under the same name starts from
 * nothing on every replica, at once: the old tenant's grants (and the
 * authorizer's cached decisions), its ServiceAccounts' tokens and its
 * cached ServiceAccounts do not apply to the new one.
 */
describe('A tenant name reused after deletion', { timeout: 150_000 }, () => {
  let cluster: TestCluster;
  let urls: string[];
  let mallory: ClientIdentity;

  before(async () => {
    const redisUrl = process.env.PLINTH_TEST_REDIS_URL;
    assert.ok(redisUrl, 'PLINTH_TEST_REDIS_URL is not set: run with test/run-tests.mjs (redis-server must be installed)');
    cluster = await TestCluster.start('tenant-name-reuse', 2, redisUrl);
    urls = cluster.replicas.map((r) => r.url);
    mallory = await certificateIdentity('mallory');
  });
  after(async () => cluster?.close());

  async function createTenant(name: string): Promise<string> {
    const created = await request(urls[0]).post(TENANTS).send(tenant(name)).expect(201);
    return created.body.metadata.uid as string;
  }

  async function deleteTenant(name: string): Promise<void> {
    await request(urls[0]).delete(`${TENANTS}/${name}`).expect(202);
    await eventually(async () => (await request(urls[0]).get(`${TENANTS}/${name}`)).status === 404, { timeoutMs: 60_000, message: `${name} to be gone` });
  }

  it("refuses the old tenant's user grants (403) and ServiceAccount tokens (401) in a new tenant of the same name, on every replica", async () => {
    const oldUid = await createTenant('acme');
    await request(urls[0]).post('/clusters/acme/api/v1/namespaces/default/serviceaccounts').send({ metadata: { name: 'bot' } }).expect(201);
    await grantClusterRole(urls[0], 'mallory-admin', 'cluster-admin', [{ kind: 'User', name: 'mallory' }], '/clusters/acme');
    await grantClusterRole(urls[0], 'bot-admin', 'cluster-admin', [{ kind: 'ServiceAccount', name: 'bot', namespace: 'default' }], '/clusters/acme');
    const minted = await request(urls[0])
      .post('/clusters/acme/api/v1/namespaces/default/serviceaccounts/bot/token')
      .send({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 48 * 3600 } })
      .expect(201);
    const bot = tokenIdentity(minted.body.status.token as string);
    await request(urls[0]).post(SECRETS('acme')).send(secret('old')).expect(201);
    // Both work once on every replica, so that each replica's caches (RBAC index and decisions, ServiceAccounts, verified tokens) hold them.
    for (const url of urls) {
      await eventually(async () => (await requestAs(url, mallory).get(SECRETS('acme'))).status === 200, { message: 'mallory reads acme' });
      await eventually(async () => (await requestAs(url, bot).get(SECRETS('acme'))).status === 200, { message: 'bot reads acme' });
    }

    await deleteTenant('acme');
    const newUid = await createTenant('acme');
    assert.notEqual(newUid, oldUid);
    await request(urls[0]).post(SECRETS('acme')).send(secret('new')).expect(201);

    // At once (no waiting for any cache to expire), on both replicas.
    for (const url of urls) {
      const asMallory = await requestAs(url, mallory).get(SECRETS('acme'));
      assert.equal(asMallory.status, 403, `mallory on ${url}: ${asMallory.status} ${JSON.stringify(asMallory.body)}`);
      assert.equal(asMallory.body.reason, 'Forbidden');
      const asBot = await requestAs(url, bot).get(SECRETS('acme'));
      assert.equal(asBot.status, 401, `bot's old token on ${url}: ${asBot.status} ${JSON.stringify(asBot.body)}`);
      assert.equal(asBot.body.reason, 'Unauthorized');
    }
    // Also when the new tenant has a ServiceAccount of the same name (a new uid): the old token names the old one and the old tenant.
    await request(urls[0]).post('/clusters/acme/api/v1/namespaces/default/serviceaccounts').send({ metadata: { name: 'bot' } }).expect(201);
    for (const url of urls) await requestAs(url, bot).get(SECRETS('acme')).expect(401);
    // The platform administrator still reads the new tenant: only the old tenant's grants went.
    const listed = await request(urls[1]).get(SECRETS('acme')).expect(200);
    assert.deepEqual(listed.body.items.map((s: { metadata: { name: string } }) => s.metadata.name), ['new']);
  });

  it('ends the watches of a tenant being deleted on every replica', async () => {
    await createTenant('watched');
    const ends = urls.map(async (url) => {
      const res = await fetch(`${url}/clusters/watched/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=120`);
      assert.equal(res.status, 200);
      const started = Date.now();
      await res.text();
      return Date.now() - started;
    });
    // Let both watches start before the deletion.
    await new Promise((r) => setTimeout(r, 500));
    await request(urls[0]).delete(`${TENANTS}/watched`).expect(202);
    const durations = await Promise.all(ends);
    // The watches asked for 120 s; each ended when its replica learned of the deletion, long before.
    for (const ms of durations) assert.ok(ms < 60_000, `a watch of the deleted tenant ran on for ${ms} ms`);
    await eventually(async () => (await request(urls[0]).get(`${TENANTS}/watched`)).status === 404, { timeoutMs: 60_000, message: 'watched to be gone' });
  });
});
