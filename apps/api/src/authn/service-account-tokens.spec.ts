import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exportPKCS8, generateKeyPair } from 'jose';
import { AuthenticationError } from './authenticator.js';
import { ServiceAccountAuthenticator } from './service-account.authenticator.js';
import { ServiceAccountTokens } from './service-account-tokens.js';

const ISSUER = 'https://issuer.test';

async function signer(alg: 'ES256' | 'RS256' = 'ES256'): Promise<ServiceAccountTokens> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  return ServiceAccountTokens.create(await exportPKCS8(privateKey), ISSUER);
}

const grant = { tenant: 'acme', namespace: 'ns', name: 'ci', uid: 'uid-1', audiences: [ISSUER], expirationSeconds: 3600 };

describe('ServiceAccount tokens', () => {
  it('issues tokens that verify in their tenant only, with per-tenant issuers', async () => {
    const t = await signer();
    const { token } = await t.issue(grant);
    const claims = await t.verify(token, 'acme');
    assert.equal(claims?.name, 'ci');
    assert.equal(t.issuerFor('acme'), `${ISSUER}/clusters/acme`);
    assert.equal(t.issuerFor('default'), ISSUER);
    await assert.rejects(t.verify(token, 'globex'), AuthenticationError);
  });

  it('rejects expired tokens, other audiences and other keys; ignores tokens of other issuers', async () => {
    const t = await signer();
    const issued = Date.now() - 7200_000;
    const { token } = await t.issue({ ...grant, expirationSeconds: 3600 }, issued);
    await assert.rejects(t.verify(token, 'acme'), /expired|"exp"/);
    const fresh = (await t.issue(grant)).token;
    await assert.rejects(t.verify(fresh, 'acme', ['vault']), AuthenticationError);
    const other = await signer('RS256');
    await assert.rejects(other.verify(fresh, 'acme'), AuthenticationError);
    assert.equal(await t.verify('not.a.jwt', 'acme'), null);
    assert.equal(await t.verify('opaque-token', 'acme'), null);
  });

  it('publishes a JWKS without private parts and a discovery document', async () => {
    const t = await signer();
    const { keys } = t.jwks();
    assert.equal(keys.length, 1);
    assert.equal(keys[0].kid, t.kid);
    assert.equal((keys[0] as Record<string, unknown>).d, undefined);
    assert.deepEqual(t.openidConfiguration('acme', 'https://h/clusters/acme'), {
      issuer: `${ISSUER}/clusters/acme`,
      jwks_uri: 'https://h/clusters/acme/openid/v1/jwks',
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['ES256'],
    });
  });

  it('binds tokens to the ServiceAccount: deleted or re-created (new uid) means refused', async () => {
    const t = await signer();
    const { token } = await t.issue(grant);
    let uid: string | undefined = 'uid-1';
    const a = new ServiceAccountAuthenticator(t, async () => uid, async () => undefined);
    const r = await a.authenticateToken(token, 'acme');
    assert.deepEqual(r?.user.groups, ['system:serviceaccounts', 'system:serviceaccounts:ns']);
    assert.equal(r?.user.username, 'system:serviceaccount:ns:ci');
    assert.deepEqual(r?.tenants, ['acme']);
    uid = 'uid-2';
    await assert.rejects(a.authenticateToken(token, 'acme'), /does not match/);
    uid = undefined;
    await assert.rejects(a.authenticateToken(token, 'acme'), /has been deleted/);
  });

  it('binds tokens to the tenant they were issued in: a new tenant of the same name (another uid) or none refuses them', async () => {
    const t = await signer();
    const { token } = await t.issue({ ...grant, tenantUid: 'tenant-uid-1' });
    assert.equal((await t.verify(token, 'acme'))?.tenantUid, 'tenant-uid-1');
    let tenantUid: string | undefined = 'tenant-uid-1';
    const a = new ServiceAccountAuthenticator(t, async () => 'uid-1', async () => tenantUid);
    assert.equal((await a.authenticateToken(token, 'acme'))?.user.username, 'system:serviceaccount:ns:ci');
    tenantUid = 'tenant-uid-2';
    await assert.rejects(a.authenticateToken(token, 'acme'), /tenant that has since been deleted/);
    tenantUid = undefined;
    await assert.rejects(a.authenticateToken(token, 'acme'), /tenant that has since been deleted/);
  });
});
