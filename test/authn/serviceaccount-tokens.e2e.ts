import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, decodeJwt, importPKCS8, jwtVerify, SignJWT } from 'jose';
import request from 'supertest';
import { anonymousIdentity, requestAs, testPki, tokenIdentity } from '../support/credentials.js';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { grantClusterRole } from '../support/rbac.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

async function tokenFor(url: string, sa: string, body: Record<string, unknown> = {}, prefix = ''): Promise<string> {
  const res = await request(url)
    .post(`${prefix}/api/v1/namespaces/default/serviceaccounts/${sa}/token`)
    .send({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: body })
    .expect(201);
  return res.body.status.token as string;
}

describe('ServiceAccounts and bound tokens', { timeout: 120_000 }, () => {
  let s: TestServer;
  let kc: string;

  before(async () => {
    s = await startTestServer('authn_sa', { PLINTH_TENANTS: 'acme,globex' });
    kc = writeTestKubeconfig(s.url);
  });
  after(async () => s.close());

  it('kubectl create sa / create token gives a JWT with upstream claims that kubectl can use with --token', async () => {
    assert.equal((await kubectl(kc, ['create', 'sa', 'ci'])).code, 0);
    const created = await kubectl(kc, ['create', 'token', 'ci', '--duration=20m']);
    assert.equal(created.code, 0, created.stderr);
    const token = created.stdout.trim();
    const claims = decodeJwt(token);
    const sa = (await request(s.url).get('/api/v1/namespaces/default/serviceaccounts/ci').expect(200)).body;
    assert.equal(claims.iss, 'https://kubernetes.default.svc.cluster.local');
    assert.equal(claims.sub, 'system:serviceaccount:default:ci');
    assert.deepEqual(claims.aud, ['https://kubernetes.default.svc.cluster.local']);
    assert.equal((claims.exp as number) - (claims.iat as number), 1200);
    assert.equal(claims.nbf, claims.iat);
    assert.match(String(claims.jti), /^[0-9a-f-]{36}$/);
    assert.deepEqual(claims['kubernetes.io'], { namespace: 'default', serviceaccount: { name: 'ci', uid: sa.metadata.uid } });
    assert.equal(claims['plinth.dev/tenant'], 'default');
    const asToken = writeTestKubeconfig(s.url, tokenIdentity(token));
    const who = await kubectl(asToken, ['auth', 'whoami', '-o', 'json']);
    assert.equal(who.code, 0, who.stderr);
    const info = JSON.parse(who.stdout).status.userInfo;
    assert.equal(info.username, 'system:serviceaccount:default:ci');
    assert.equal(info.uid, sa.metadata.uid);
    assert.deepEqual(info.groups, ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated']);
    assert.equal(info.extra['authentication.kubernetes.io/credential-id'][0], `JTI=${claims.jti}`);
    // A ServiceAccount has no rights until it is bound to a role, as upstream.
    const refused = await kubectl(asToken, ['get', 'ns', '-o', 'name']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /namespaces is forbidden: User "system:serviceaccount:default:ci" cannot list resource "namespaces"/);
    assert.equal((await kubectl(kc, ['create', 'clusterrolebinding', 'ci-view', '--clusterrole=view', '--serviceaccount=default:ci'])).code, 0);
    const list = await kubectl(asToken, ['get', 'ns', '-o', 'name']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /namespace\/default/);
  });

  it('serves the issuer discovery document and a JWKS that verifies the tokens', async () => {
    await request(s.url).post('/api/v1/namespaces/default/serviceaccounts').send({ metadata: { name: 'jwks' } }).expect(201);
    const token = await tokenFor(s.url, 'jwks', { audiences: ['vault'] });
    const disco = (await request(s.url).get('/.well-known/openid-configuration').expect(200)).body;
    assert.equal(disco.issuer, 'https://kubernetes.default.svc.cluster.local');
    assert.match(disco.jwks_uri, /^https:\/\/127\.0\.0\.1:\d+\/openid\/v1\/jwks$/);
    assert.deepEqual(disco.id_token_signing_alg_values_supported, ['ES256']);
    const jwks = await request(s.url).get('/openid/v1/jwks').expect(200);
    assert.equal(jwks.headers['content-type'], 'application/jwk-set+json');
    const jwksBody = jwks.body;
    const { payload } = await jwtVerify(token, createLocalJWKSet(jwksBody), { issuer: disco.issuer, audience: 'vault' });
    assert.equal(payload.sub, 'system:serviceaccount:default:jwks');
    const acme = (await request(s.url).get('/clusters/acme/.well-known/openid-configuration').expect(200)).body;
    assert.equal(acme.issuer, 'https://kubernetes.default.svc.cluster.local/clusters/acme');
    assert.match(acme.jwks_uri, /\/clusters\/acme\/openid\/v1\/jwks$/);
    await request(s.url).get('/clusters/nope/.well-known/openid-configuration').expect(404);
  });

  it('stops accepting a token once its ServiceAccount is deleted, and after it is re-created under the same name', async () => {
    await request(s.url).post('/api/v1/namespaces/default/serviceaccounts').send({ metadata: { name: 'gone' } }).expect(201);
    await grantClusterRole(s.url, 'gone-view', 'view', [{ kind: 'ServiceAccount', name: 'gone', namespace: 'default' }]);
    const token = await tokenFor(s.url, 'gone');
    const as = requestAs(s.url, tokenIdentity(token));
    await as.get('/api/v1/namespaces').expect(200);
    await request(s.url).delete('/api/v1/namespaces/default/serviceaccounts/gone').expect(200);
    const denied = await as.get('/api/v1/namespaces').expect(401);
    assert.deepEqual(denied.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
    await request(s.url).post('/api/v1/namespaces/default/serviceaccounts').send({ metadata: { name: 'gone' } }).expect(201);
    await as.get('/api/v1/namespaces').expect(401);
    await requestAs(s.url, tokenIdentity(await tokenFor(s.url, 'gone'))).get('/api/v1/namespaces').expect(200);
  });

  it('a token of one tenant is worthless in another', async () => {
    await request(s.url).post('/clusters/acme/api/v1/namespaces/default/serviceaccounts').send({ metadata: { name: 'ci' } }).expect(201);
    await request(s.url).post('/clusters/globex/api/v1/namespaces/default/serviceaccounts').send({ metadata: { name: 'ci' } }).expect(201);
    await grantClusterRole(s.url, 'ci-view', 'view', [{ kind: 'ServiceAccount', name: 'ci', namespace: 'default' }], '/clusters/acme');
    await grantClusterRole(s.url, 'ci-view', 'view', [{ kind: 'ServiceAccount', name: 'ci', namespace: 'default' }], '/clusters/globex');
    const acmeToken = await tokenFor(s.url, 'ci', {}, '/clusters/acme');
    const as = requestAs(s.url, tokenIdentity(acmeToken));
    await as.get('/clusters/acme/api/v1/namespaces').expect(200);
    await as.get('/clusters/globex/api/v1/namespaces').expect(401);
    await as.get('/api/v1/namespaces').expect(401);
    const review = await request(s.url).post('/clusters/globex/apis/authentication.k8s.io/v1/tokenreviews').send({ spec: { token: acmeToken } }).expect(201);
    assert.notEqual(review.body.status.authenticated, true);
  });

  it('rejects expired tokens and tokens for another audience', async () => {
    await request(s.url).post('/api/v1/namespaces/default/serviceaccounts').send({ metadata: { name: 'old' } }).expect(201);
    await grantClusterRole(s.url, 'old-view', 'view', [{ kind: 'ServiceAccount', name: 'old', namespace: 'default' }]);
    const sa = (await request(s.url).get('/api/v1/namespaces/default/serviceaccounts/old').expect(200)).body;
    const key = await importPKCS8(testPki().serviceAccountKeyPem, 'ES256');
    const now = Math.floor(Date.now() / 1000);
    const sign = (exp: number, aud: string) =>
      new SignJWT({ 'kubernetes.io': { namespace: 'default', serviceaccount: { name: 'old', uid: sa.metadata.uid } }, 'plinth.dev/tenant': 'default' })
        .setProtectedHeader({ alg: 'ES256' })
        .setIssuer('https://kubernetes.default.svc.cluster.local')
        .setSubject('system:serviceaccount:default:old')
        .setAudience(aud)
        .setIssuedAt(now - 7200)
        .setNotBefore(now - 7200)
        .setExpirationTime(exp)
        .sign(key);
    await requestAs(s.url, tokenIdentity(await sign(now + 600, 'https://kubernetes.default.svc.cluster.local'))).get('/api/v1/namespaces').expect(200);
    await requestAs(s.url, tokenIdentity(await sign(now - 60, 'https://kubernetes.default.svc.cluster.local'))).get('/api/v1/namespaces').expect(401);
    await requestAs(s.url, tokenIdentity(await sign(now + 600, 'elsewhere'))).get('/api/v1/namespaces').expect(401);
  });

  it('validates expirationSeconds (at least 10 minutes), caps it, and 404s for a missing ServiceAccount', async () => {
    await request(s.url).post('/api/v1/namespaces/default/serviceaccounts').send({ metadata: { name: 'exp' } }).expect(201);
    const short = await request(s.url).post('/api/v1/namespaces/default/serviceaccounts/exp/token').send({ spec: { expirationSeconds: 599 } }).expect(422);
    assert.equal(short.body.message, 'TokenRequest.authentication.k8s.io "exp" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes');
    const long = await request(s.url).post('/api/v1/namespaces/default/serviceaccounts/exp/token').send({ spec: { expirationSeconds: 10 ** 7 } }).expect(201);
    assert.equal(long.body.spec.expirationSeconds, 86400);
    const claims = decodeJwt(long.body.status.token);
    assert.equal((claims.exp as number) - (claims.iat as number), 86400);
    assert.equal(new Date(long.body.status.expirationTimestamp).getTime() / 1000, claims.exp);
    const missing = await request(s.url).post('/api/v1/namespaces/default/serviceaccounts/nobody/token').send({ spec: {} }).expect(404);
    assert.equal(missing.body.message, 'serviceaccounts "nobody" not found');
  });

  it('TokenReview answers who a token belongs to, or authenticated false', async () => {
    await request(s.url).post('/api/v1/namespaces/default/serviceaccounts').send({ metadata: { name: 'rev' } }).expect(201);
    const token = await tokenFor(s.url, 'rev');
    const ok = await request(s.url).post('/apis/authentication.k8s.io/v1/tokenreviews').send({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }).expect(201);
    assert.equal(ok.body.kind, 'TokenReview');
    assert.equal(ok.body.status.authenticated, true);
    assert.equal(ok.body.status.user.username, 'system:serviceaccount:default:rev');
    assert.deepEqual(ok.body.status.audiences, ['https://kubernetes.default.svc.cluster.local']);
    const bad = await request(s.url).post('/apis/authentication.k8s.io/v1/tokenreviews').send({ spec: { token: 'nope' } }).expect(201);
    assert.notEqual(bad.body.status.authenticated, true);
    assert.ok(bad.body.status.error);
    const empty = await request(s.url).post('/apis/authentication.k8s.io/v1/tokenreviews').send({ spec: {} }).expect(400);
    assert.equal(empty.body.message, 'token is required for TokenReview in authentication');
    const otherAudience = await request(s.url).post('/apis/authentication.k8s.io/v1/tokenreviews').send({ spec: { token, audiences: ['vault'] } }).expect(201);
    assert.notEqual(otherAudience.body.status.authenticated, true);
  });

  it('anonymous requests cannot create tokens', async () => {
    await requestAs(s.url, anonymousIdentity()).post('/api/v1/namespaces/default/serviceaccounts/ci/token').send({ spec: {} }).expect(403);
  });
});
