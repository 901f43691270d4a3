import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANONYMOUS_EVERYWHERE, ANONYMOUS_NOWHERE, AnonymousAuthenticator } from './anonymous.authenticator.js';

describe('anonymous authenticator', () => {
  const health = new AnonymousAuthenticator({ enabled: true, conditions: [{ path: '/healthz' }, { path: '/version' }, { path: '/clusters/acme/api' }] });

  it('allows every path when enabled without conditions, none when disabled', () => {
    assert.equal(new AnonymousAuthenticator(ANONYMOUS_EVERYWHERE).allows('/api/v1/pods'), true);
    assert.equal(new AnonymousAuthenticator(ANONYMOUS_NOWHERE).allows('/healthz'), false);
  });

  it('matches condition paths exactly: no prefixes, no trailing slash, no sub-paths', () => {
    assert.equal(health.allows('/healthz'), true);
    assert.equal(health.allows('/healthz/'), false);
    assert.equal(health.allows('/healthz/ping'), false);
    assert.equal(health.allows('/health'), false);
    assert.equal(health.allows('/livez'), false);
  });

  it('compares the percent-decoded path, and matches nothing with an encoded slash or a malformed escape', () => {
    assert.equal(health.allows('/health%7A'), true);
    assert.equal(health.allows('/clusters/x%2Fhealthz'), false);
    assert.equal(health.allows('/%E0%A4%A'), false);
  });

  it('matches a path under any tenant prefix against the condition without it; a tenant-prefixed condition opens that tenant only', () => {
    assert.equal(health.allows('/clusters/acme/version'), true);
    assert.equal(health.allows('/clusters/globex/version'), true);
    assert.equal(health.allows('/clusters/acme/api'), true);
    assert.equal(health.allows('/clusters/globex/api'), false);
    assert.equal(health.allows('/api'), false);
    assert.equal(health.allows('/clusters/acme/versions'), false);
  });
});
