import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AuthenticationChain, BearerTokenAuthenticator } from './authentication-chain.js';
import { AuthenticationError, type RequestAuthenticator, type TokenAuthenticator } from './authenticator.js';
import { bearerTokenOf } from './bearer-token.js';
import { X509Authenticator } from './x509.authenticator.js';
import { ANONYMOUS_EVERYWHERE, ANONYMOUS_NOWHERE, AnonymousAuthenticator } from './anonymous.authenticator.js';

const everywhere = new AnonymousAuthenticator(ANONYMOUS_EVERYWHERE);
const nowhere = new AnonymousAuthenticator(ANONYMOUS_NOWHERE);

const token = (name: string, known: Record<string, string>, reject: string[] = []): TokenAuthenticator => ({
  name,
  authenticateToken: (t) => {
    if (reject.includes(t)) throw new AuthenticationError(`${name} rejects`);
    return known[t] ? { user: { username: known[t], groups: [] } } : null;
  },
});

describe('authentication chain', () => {
  const cert = new X509Authenticator(async () => undefined);

  it('takes the client certificate first (CN user, O groups), adding system:authenticated', async () => {
    const chain = new AuthenticationChain([cert, new BearerTokenAuthenticator([token('a', { t: 'tok' })])], everywhere);
    const r = await chain.authenticate({ tenant: 'default', bearerToken: 't', peerCertificate: { verified: true, commonName: 'jane', organizations: ['devs'], extKeyUsage: ['1.3.6.1.5.5.7.3.2'] } });
    assert.deepEqual(r, { ok: true, anonymous: false, result: { user: { username: 'jane', groups: ['devs', 'system:authenticated'] } } });
  });

  it('falls through an unverified certificate to a valid token, and fails when nothing else answers', async () => {
    const chain = new AuthenticationChain([cert, new BearerTokenAuthenticator([token('a', { t: 'tok' })])], everywhere);
    const bad = { verified: false, verifyError: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', commonName: 'root', organizations: ['system:masters'] };
    const viaToken = await chain.authenticate({ tenant: 'default', bearerToken: 't', peerCertificate: bad });
    assert.equal(viaToken.ok && viaToken.result.user.username, 'tok');
    const none = await chain.authenticate({ tenant: 'default', peerCertificate: bad });
    assert.equal(none.ok, false);
  });

  it('refuses a certificate without client-auth usage', async () => {
    const chain = new AuthenticationChain([cert], everywhere);
    const r = await chain.authenticate({ tenant: 'default', peerCertificate: { verified: true, commonName: 'x', organizations: [], extKeyUsage: ['1.3.6.1.5.5.7.3.1'] } });
    assert.equal(r.ok, false);
  });

  it('tries token authenticators in order: the first that accepts wins; an unknown token is a failure, never anonymous', async () => {
    const bearer = new BearerTokenAuthenticator([token('a', {}, ['x']), token('b', { x: 'from-b', y: 'from-b' })]);
    const chain = new AuthenticationChain([cert, bearer], everywhere);
    const x = await chain.authenticate({ tenant: 'default', bearerToken: 'x' });
    assert.equal(x.ok && x.result.user.username, 'from-b');
    const z = await chain.authenticate({ tenant: 'default', bearerToken: 'z' });
    assert.deepEqual(z, { ok: false, reasons: ['bearer: invalid bearer token'] });
  });

  it('makes requests without credentials anonymous, or fails when anonymous access is off', async () => {
    const on = await new AuthenticationChain([cert], everywhere).authenticate({ tenant: 'default' });
    assert.deepEqual(on, { ok: true, anonymous: true, result: { user: { username: 'system:anonymous', groups: ['system:unauthenticated'] } } });
    const off = await new AuthenticationChain([cert], nowhere).authenticate({ tenant: 'default' });
    assert.equal(off.ok, false);
  });

  it('makes requests without credentials anonymous only on the paths of the anonymous conditions; invalid credentials stay 401 there', async () => {
    const chain = new AuthenticationChain([cert, new BearerTokenAuthenticator([token('a', { t: 'tok' })])], new AnonymousAuthenticator({ enabled: true, conditions: [{ path: '/healthz' }] }));
    const listed = await chain.authenticate({ tenant: 'default', path: '/healthz' });
    assert.equal(listed.ok && listed.anonymous, true);
    assert.deepEqual(await chain.authenticate({ tenant: 'default', path: '/api' }), { ok: false, reasons: ['anonymous: not allowed on this path'] });
    assert.equal((await chain.authenticate({ tenant: 'default' })).ok, false);
    assert.deepEqual(await chain.authenticate({ tenant: 'default', path: '/healthz', bearerToken: 'nope' }), { ok: false, reasons: ['bearer: invalid bearer token'] });
  });

  it('refuses a credential bound to other tenants', async () => {
    const bound: RequestAuthenticator = { name: 'b', authenticate: () => ({ user: { username: 'u', groups: [], extra: { 'tenancy.plinth.dev/tenant': ['acme'] } } }) };
    const chain = new AuthenticationChain([bound], everywhere);
    assert.equal((await chain.authenticate({ tenant: 'acme' })).ok, true);
    assert.equal((await chain.authenticate({ tenant: 'globex' })).ok, false);
    const listed: RequestAuthenticator = { name: 'l', authenticate: () => ({ user: { username: 'u', groups: [] }, tenants: ['a'] }) };
    assert.equal((await new AuthenticationChain([listed], everywhere).authenticate({ tenant: 'b' })).ok, false);
  });

  it('reads Bearer tokens case-insensitively and ignores other schemes', () => {
    assert.equal(bearerTokenOf('Bearer abc'), 'abc');
    assert.equal(bearerTokenOf('bearer  abc '), 'abc');
    assert.equal(bearerTokenOf('Basic abc'), undefined);
    assert.equal(bearerTokenOf('Bearer '), undefined);
    assert.equal(bearerTokenOf(undefined), undefined);
  });
});
