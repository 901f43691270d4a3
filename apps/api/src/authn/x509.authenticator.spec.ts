import 'reflect-metadata';
import assert from 'node:assert/strict';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { describe, it } from 'node:test';
import { TENANT_EXTRA_KEY } from '@plinth/apimachinery';
import { AuthenticationError, type PeerCertificate } from './authenticator.js';
import { reachesTenant } from './authentication-chain.js';
import { X509Authenticator } from './x509.authenticator.js';
import { subjectUids, USER_UID_OID } from '../pki/tenant-binding.js';

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

  it("takes the user uid from the one UID attribute, with upstream's errors for several or an empty one, and ignores it with the gate off", () => {
    const uidOf = (a: X509Authenticator, c: PeerCertificate) => (a.authenticate({ tenant: 'acme', peerCertificate: c }) as { user: { uid?: string } }).user.uid;
    assert.equal(uidOf(authn, cert({ uids: ['u-7'] })), 'u-7');
    assert.equal(uidOf(authn, cert({})), undefined);
    assert.throws(() => authn.authenticate({ tenant: 'acme', peerCertificate: cert({ uids: ['a', 'b'] }) }), /expected 1 UID, but found multiple: \[a b\]/);
    assert.throws(() => authn.authenticate({ tenant: 'acme', peerCertificate: cert({ uids: [''] }) }), /UID cannot be an empty string/);
    assert.throws(() => authn.authenticate({ tenant: 'acme', peerCertificate: cert({ uidError: 'unable to parse UID into a string' }) }), /unable to parse UID into a string/);
    const off = new X509Authenticator(async () => undefined, false);
    assert.equal(uidOf(off, cert({ uids: ['a', 'b'] })), undefined);
  });
});

describe('subject UID attributes of a certificate', () => {
  const make = async (values: string[]): Promise<Uint8Array> => {
    const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
    const keys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
    const name = [{ CN: ['x'] }, ...values.map((v) => ({ [USER_UID_OID]: [v] }))];
    const c = await x509.X509CertificateGenerator.createSelfSigned({ serialNumber: '01', name, keys, signingAlgorithm: alg });
    return new Uint8Array(c.rawData);
  };

  it('reads string values in order and refuses one that is not a string', async () => {
    assert.deepEqual(subjectUids(await make([])), []);
    assert.deepEqual(subjectUids(await make(['u-1', 'u-2'])), ['u-1', 'u-2']);
    // `#` + hex: the DER of an OCTET STRING, not a string type.
    const octets = await make(['#04020102']);
    assert.throws(() => subjectUids(octets), /unable to parse UID into a string/);
  });
});
