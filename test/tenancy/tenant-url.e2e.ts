import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { after, describe, it } from 'node:test';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';

/** The status.url of a new Tenant `name` and of the platform tenant, as `s` reports them. */
async function urlsOf(s: TestServer, name: string): Promise<{ tenant: string; platform: string }> {
  // It listens on every address; the test connects over loopback (the serving certificate names 127.0.0.1).
  const local = `https://127.0.0.1:${s.port}`;
  const created = (await request(local).post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name } }).expect(201)).body;
  const platform = (await request(local).get(`${TENANTS}/default`).expect(200)).body;
  return { tenant: created.status.url, platform: platform.status.url };
}

// Plinth listening on every address (HOST=0.0.0.0, as in a container): clients must be told a reachable name.
describe('a Tenant\'s status.url when Plinth listens on 0.0.0.0', { timeout: 120_000 }, () => {
  const servers: TestServer[] = [];
  after(async () => {
    for (const s of servers) await s.close();
  });

  it('is PLINTH_ADVERTISE_URL when set', async () => {
    const s = await startTestServer('tenant_url_advertised', { HOST: '0.0.0.0', PLINTH_ADVERTISE_URL: 'https://plinth.example.com:8443' });
    servers.push(s);
    assert.deepEqual(await urlsOf(s, 'acme'), { tenant: 'https://plinth.example.com:8443/clusters/acme', platform: 'https://plinth.example.com:8443' });
  });

  it('else a name of the serving certificate (this host\'s name in the generated one), with the port; never 0.0.0.0', async () => {
    const s = await startTestServer('tenant_url_derived', { HOST: '0.0.0.0' });
    servers.push(s);
    const { tenant, platform } = await urlsOf(s, 'acme');
    assert.equal(platform, `https://${hostname()}:${s.port}`);
    assert.equal(tenant, `https://${hostname()}:${s.port}/clusters/acme`);
    assert.doesNotMatch(tenant, /0\.0\.0\.0|\[::\]/);
  });
});
