import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TENANT_EXTRA_KEY } from '@plinth/apimachinery';
import { AuthenticationError, type PeerCertificate } from './authenticator.js';
import { reachesTenant } from './authentication-chain.js';
import { X509Authenticator } from './x509.authenticator.js';

const cert = (c: Partial<PeerCertificate>): PeerCertificate => ({ verified: true, commonName: 'alice', organizations: ['devs'], ...c });

describe('x509 authenticator and tenant-bound certificates', () => {
  // acme exists now with uid u-2 (an earlier acme, deleted, had u-1).
  const authn = new X509Authenticator(async (t) => (t === 'acme' ? 'u-2' : undefined));

  it('holds a bound certificate to its tenant (extra and tenants), leaves an unbound one free', async () => {
    const bound = (await authn.authenticate({ tenant: 'acme', peerCertificate: cert({ tenant: 'acme', tenantUid: 'u-2' }) }))!;
    assert.deepEqual(bound.user.extra, { [TENANT_EXTRA_KEY]: ['acme'] });
    assert.equal(reachesTenant(bound, 'acme'), true);
    assert.equal(reachesTenant(bound, 'globex'), false);
    assert.equal(reachesTenant(bound, 'default'), false);
    const free = (await authn.authenticate({ tenant: 'acme', peerCertificate: cert({}) }))!;
    assert.equal(reachesTenant(free, 'globex'), true);
  });

  it('refuses a certificate issued in an earlier tenant of the same name (another uid), and in a tenant that is gone', async () => {
    await assert.rejects(Promise.resolve(authn.authenticate({ tenant: 'acme', peerCertificate: cert({ tenant: 'acme', tenantUid: 'u-1' }) })), /issued in an earlier tenant named acme/);
    await assert.rejects(Promise.resolve(authn.authenticate({ tenant: 'gone', peerCertificate: cert({ tenant: 'gone', tenantUid: 'u-9' }) })), AuthenticationError);
  });

  it('refuses a bound certificate naming system:masters, and a malformed binding', () => {
    assert.throws(() => authn.authenticate({ tenant: 'acme', peerCertificate: cert({ tenant: 'acme', organizations: ['system:masters'] }) }), AuthenticationError);
    assert.throws(() => authn.authenticate({ tenant: 'acme', peerCertificate: cert({ bindingError: 'malformed tenant binding' }) }), /malformed tenant binding/);
  });
});
