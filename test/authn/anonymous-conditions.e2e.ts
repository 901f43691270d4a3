import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { anonymousIdentity, requestAs, tokenIdentity } from '../support/credentials.js';
import { eventually } from '../support/eventually.js';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { grantInNamespace } from '../support/rbac.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const UNAUTHORIZED = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 };
const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';

// The `anonymous` block of AuthenticationConfiguration: anonymous requests only on the listed paths (exact
// matches; under a tenant prefix too), 401 elsewhere, and RBAC still decides what system:anonymous may do.
describe('anonymous authentication limited to paths (AuthenticationConfiguration anonymous.conditions)', { timeout: 120_000 }, () => {
  let s: TestServer;
  const anonymous = () => requestAs(s.url, anonymousIdentity());
  /**
   * A kubeconfig whose user presents no credential Plinth reads: kubectl prompts for a user name when its
   * user has nothing at all, so it gets basic-auth fields, which Plinth (as kube-apiserver since 1.19) ignores.
   */
  const anonymousKubeconfig = () => {
    const file = writeTestKubeconfig(s.url, anonymousIdentity());
    writeFileSync(file, readFileSync(file, 'utf8').replace(/user: \{\}/, 'user: {username: nobody, password: none}'));
    return file;
  };

  before(async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'plinth-anonymous-')), 'authn.yaml');
    writeFileSync(
      file,
      stringify({
        apiVersion: 'apiserver.config.k8s.io/v1',
        kind: 'AuthenticationConfiguration',
        anonymous: { enabled: true, conditions: [{ path: '/livez' }, { path: '/readyz' }, { path: '/healthz' }, { path: CONFIGMAPS }] },
      }),
    );
    s = await startTestServer('authn_anonymous', { PLINTH_AUTHENTICATION_CONFIG: file, PLINTH_TENANTS: 'acme' });
  });
  after(async () => s?.close());

  it('answers the health endpoints of the conditions to requests without credentials', async () => {
    for (const p of ['/healthz', '/livez', '/readyz']) {
      const r = await anonymous().get(p);
      assert.equal(r.status, 200, `${p}: ${r.text}`);
      assert.equal(r.text, 'ok');
    }
    const out = await kubectl(anonymousKubeconfig(), ['get', '--raw', '/readyz']);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout.trim(), 'ok');
  });

  it('refuses requests without credentials on every other path with 401 Unauthorized, sub-paths and trailing slashes included', async () => {
    for (const p of ['/version', '/api', '/apis', '/healthz/', '/readyz/ping', `${CONFIGMAPS}/x`, '/api/v1/namespaces/default/secrets', '/clusters/acme/api']) {
      const r = await anonymous().get(p);
      assert.equal(r.status, 401, p);
      assert.deepEqual(r.body, UNAUTHORIZED, p);
    }
    const out = await kubectl(anonymousKubeconfig(), ['get', 'namespaces']);
    assert.notEqual(out.code, 0);
    assert.match(out.stderr, /You must be logged in to the server \(the server has asked for the client to provide credentials\)/);
  });

  it('still refuses invalid credentials on an anonymous path (401, never anonymous)', async () => {
    const r = await requestAs(s.url, tokenIdentity('not-a-token')).get('/healthz');
    assert.equal(r.status, 401);
  });

  it('leaves the decision to RBAC: 403 for system:anonymous until a binding grants it, then 200', async () => {
    const denied = await anonymous().get(CONFIGMAPS);
    assert.equal(denied.status, 403, denied.text);
    assert.equal(denied.body.reason, 'Forbidden');
    assert.match(denied.body.message, /User "system:anonymous" cannot list resource "configmaps"/);
    await grantInNamespace(s.url, 'default', 'anonymous-view', 'view', [{ kind: 'User', name: 'system:anonymous' }]);
    await eventually(async () => assert.equal((await anonymous().get(CONFIGMAPS)).status, 200), { timeoutMs: 15_000, intervalMs: 200, message: 'the binding applies to system:anonymous' });
    const list = await anonymous().get(CONFIGMAPS).expect(200);
    assert.equal(list.body.kind, 'ConfigMapList');
    // The binding does not open paths the conditions do not list.
    await anonymous().get(`${CONFIGMAPS}/kube-root-ca.crt`).expect(401);
  });

  it('matches a condition under a tenant prefix too, and the tenant own RBAC decides', async () => {
    const tenantPath = `/clusters/acme${CONFIGMAPS}`;
    // The default tenant's binding does not reach acme: authenticated as anonymous, then forbidden.
    assert.equal((await anonymous().get(tenantPath)).status, 403);
    await grantInNamespace(s.url, 'default', 'anonymous-view', 'view', [{ kind: 'User', name: 'system:anonymous' }], '/clusters/acme');
    await eventually(async () => assert.equal((await anonymous().get(tenantPath)).status, 200), { timeoutMs: 15_000, intervalMs: 200, message: 'the binding in acme applies' });
    await anonymous().get(`/clusters/acme/api/v1/namespaces/default/secrets`).expect(401);
  });
});
