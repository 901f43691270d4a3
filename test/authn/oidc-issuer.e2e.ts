import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { CertificateAuthority } from '../../apps/api/src/pki/certificate-authority.js';
import { requestAs, tokenIdentity } from '../support/credentials.js';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { grantClusterRole } from '../support/rbac.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { eventually } from '../support/eventually.js';
import { OidcTestIssuer } from '../support/oidc-test-issuer.js';

describe('external OIDC/JWT issuers (AuthenticationConfiguration)', { timeout: 120_000 }, () => {
  let s: TestServer;
  const issuer = new OidcTestIssuer();
  const jane = { sub: 'u-jane', email: 'jane@example.com', email_verified: true, hd: 'example.com', groups: ['devs', 'ops'], tenants: ['acme'] };

  before(async () => {
    const ca = await CertificateAuthority.generate('issuer-ca');
    await issuer.start(ca);
    const dir = mkdtempSync(path.join(tmpdir(), 'plinth-authn-config-'));
    const file = path.join(dir, 'authn.yaml');
    writeFileSync(
      file,
      stringify({
        apiVersion: 'apiserver.config.k8s.io/v1beta1',
        kind: 'AuthenticationConfiguration',
        jwt: [
          {
            issuer: { url: issuer.url, audiences: ['plinth'], certificateAuthority: ca.certPem },
            claimValidationRules: [{ expression: 'claims.hd == "example.com"', message: 'wrong hosted domain' }],
            claimMappings: {
              username: { claim: 'email', prefix: 'oidc:' },
              groups: { expression: 'claims.groups.map(g, "oidc:" + g)' },
              uid: { claim: 'sub' },
              extra: [{ key: 'tenancy.plinth.dev/tenant', valueExpression: 'has(claims.tenants) ? claims.tenants : []' }],
            },
            userValidationRules: [{ expression: "!user.username.startsWith('oidc:system')", message: 'reserved user name' }],
          },
        ],
      }),
    );
    s = await startTestServer('authn_oidc', { PLINTH_AUTHENTICATION_CONFIG: file, PLINTH_TENANTS: 'acme,globex' });
    // The issuer's users get their rights from RBAC through their mapped groups, in each tenant.
    for (const prefix of ['', '/clusters/acme', '/clusters/globex']) await grantClusterRole(s.url, 'oidc-devs-view', 'view', [{ kind: 'Group', name: 'oidc:devs' }], prefix);
  });
  after(async () => {
    await s?.close();
    await issuer.close();
  });

  it('authenticates a token of the issuer with kubectl --token, mapping claims and CEL expressions', async () => {
    const token = await issuer.sign(jane);
    const out = await kubectl(writeTestKubeconfig(`${s.url}/clusters/acme`, tokenIdentity(token)), ['auth', 'whoami', '-o', 'json']);
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(JSON.parse(out.stdout).status.userInfo, {
      username: 'oidc:jane@example.com',
      uid: 'u-jane',
      groups: ['oidc:devs', 'oidc:ops', 'system:authenticated'],
      extra: { 'tenancy.plinth.dev/tenant': ['acme'] },
    });
    const get = await kubectl(writeTestKubeconfig(`${s.url}/clusters/acme`, tokenIdentity(token)), ['get', 'ns', '-o', 'name']);
    assert.match(get.stdout, /namespace\/default/);
  });

  it('limits the identity to the tenants its claims map to', async () => {
    const as = requestAs(s.url, tokenIdentity(await issuer.sign(jane)));
    await as.get('/clusters/acme/api/v1/namespaces').expect(200);
    await as.get('/clusters/globex/api/v1/namespaces').expect(401);
    await as.get('/api/v1/namespaces').expect(401);
    const anywhere = requestAs(s.url, tokenIdentity(await issuer.sign({ ...jane, tenants: undefined })));
    await anywhere.get('/clusters/globex/api/v1/namespaces').expect(200);
  });

  it('refuses wrong audiences, expired tokens, failed claim and user validation, unverified email and unknown issuers with 401', async () => {
    const tries = [
      await issuer.sign(jane, { aud: 'other' }),
      await issuer.sign(jane, { expiresIn: -60 }),
      await issuer.sign({ ...jane, hd: 'evil.com' }),
      await issuer.sign({ ...jane, email: 'system:admin@example.com' }),
      await issuer.sign({ ...jane, email_verified: false }),
      await issuer.sign(jane, { iss: 'https://127.0.0.1:1' }),
      await issuer.sign({ ...jane, groups: 42 }),
    ];
    for (const [i, token] of tries.entries()) {
      const res = await requestAs(s.url, tokenIdentity(token)).get('/clusters/acme/api/v1/namespaces');
      assert.equal(res.status, 401, `case ${i}`);
    }
  });

  it('fetches the JWKS again when a token names an unknown key id (key rotation)', async () => {
    await requestAs(s.url, tokenIdentity(await issuer.sign(jane))).get('/clusters/acme/api/v1/namespaces').expect(200);
    const before = issuer.jwksFetches;
    await issuer.rotate();
    const rotated = await issuer.sign(jane);
    await eventually(async () => assert.equal((await requestAs(s.url, tokenIdentity(rotated)).get('/clusters/acme/api/v1/namespaces')).status, 200), {
      timeoutMs: 15_000,
      intervalMs: 500,
      message: 'the rotated key accepted',
    });
    assert.ok(issuer.jwksFetches > before);
  });

  it('answers TokenReview for issuer tokens', async () => {
    const token = await issuer.sign(jane);
    const { default: request } = await import('supertest');
    const r = await request(s.url).post('/clusters/acme/apis/authentication.k8s.io/v1/tokenreviews').send({ spec: { token } }).expect(201);
    assert.equal(r.body.status.authenticated, true);
    assert.equal(r.body.status.user.username, 'oidc:jane@example.com');
    assert.deepEqual(r.body.status.audiences, ['plinth']);
  });
});
