import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TENANT_EXTRA_KEY } from '@plinth/apimachinery';
import { AuthenticationError, type PeerCertificate } from './authenticator.js';
import { reachesTenant } from './authentication-chain.js';
import { X509Authenticator } from './x509.authenticator.js';

const cert = (c: Partial<PeerCertificate>): PeerCertificate => ({ verified: true, commonName: 'alice', organizations: ['devs'], ...c });

describe('x509 authenticator and tenant-bound certificates', () => {
  const authn = new X509Authenticator();

  it('holds a bound certificate to its tenant (extra and tenants), leaves an unbound one free', () => {
    const bound = authn.authenticate({ tenant: 'acme', peerCertificate: cert({ tenant: 'acme' }) })!;
    assert.deepEqual(bound.user.extra, { [TENANT_EXTRA_KEY]: ['acme'] });
    assert.equal(reachesTenant(bound, 'acme'), true);
    assert.equal(reachesTenant(bound, 'globex'), false);
    assert.equal(reachesTenant(bound, 'default'), false);
    const free = authn.authenticate({ tenant: 'acme', peerCertificate: cert({}) })!;
    assert.equal(reachesTenant(free, 'globex'), true);
  });

  it('refuses a bound certificate naming system:masters, and a malformed binding', () => {
    assert.throws(() => authn.authenticate({ tenant: 'acme', peerCertificate: cert({ tenant: 'acme', organizations: ['system:masters'] }) }), AuthenticationError);
    assert.throws(() => authn.authenticate({ tenant: 'acme', peerCertificate: cert({ bindingError: 'malformed tenant binding' }) }), /malformed tenant binding/);
  });
});
