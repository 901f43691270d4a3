import 'reflect-metadata';
import assert from 'node:assert/strict';
import { webcrypto } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import * as x509 from '@peculiar/x509';
import { requestAs, testCertificateAuthority, type ClientIdentity } from '../support/credentials.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const UID_OID = '1.3.6.1.4.1.57683.2';
const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

function pemBody(pem: string): Buffer {
  return Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
}

/** A client certificate signed by the test CA whose subject is `subject` as given (UID attributes included). */
async function identityWithSubject(subject: x509.JsonName): Promise<ClientIdentity> {
  const ca = testCertificateAuthority();
  const caCert = new x509.X509Certificate(ca.certPem);
  const caKey = await webcrypto.subtle.importKey('pkcs8', pemBody(ca.keyPem), EC, false, ['sign']);
  const keys = await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify']);
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: now.toString(16),
    subject,
    issuer: caCert.subjectName,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 3_600_000),
    signingAlgorithm: EC,
    publicKey: keys.publicKey,
    signingKey: caKey,
    extensions: [new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth])],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)).toString('base64');
  return { caPem: ca.certPem, certPem: cert.toString('pem'), keyPem: `-----BEGIN PRIVATE KEY-----\n${pkcs8.match(/.{1,64}/g)!.join('\n')}\n-----END PRIVATE KEY-----\n` };
}

function whoami(url: string, id: ClientIdentity) {
  return requestAs(url, id).post('/apis/authentication.k8s.io/v1/selfsubjectreviews').send({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
}

describe('client certificates carry the user uid in the subject (AllowParsingUserUIDFromCertAuth, on by default as in 1.34)', { timeout: 120_000 }, () => {
  let s: TestServer;
  let off: TestServer;
  before(async () => {
    s = await startTestServer('cert_uid');
    off = await startTestServer('cert_uid_off', { PLINTH_FEATURE_GATES: 'AllowParsingUserUIDFromCertAuth=false' });
  });
  after(async () => {
    await s?.close();
    await off?.close();
  });

  it('takes the one UID attribute as the user uid', async () => {
    const carol = await identityWithSubject([{ CN: ['carol'] }, { O: ['devs'] }, { [UID_OID]: ['uid-carol-1'] }]);
    const res = await whoami(s.url, carol).expect(201);
    assert.deepEqual(res.body.status.userInfo, { username: 'carol', uid: 'uid-carol-1', groups: ['devs', 'system:authenticated'] });
    const plain = await whoami(s.url, await identityWithSubject([{ CN: ['dave'] }])).expect(201);
    assert.equal(plain.body.status.userInfo.uid, undefined, 'no UID attribute: no uid');
  });

  // A UID that is not a string type cannot be sent at all (OpenSSL refuses to load such a subject): see x509.authenticator.spec.ts.
  it('refuses a certificate with two UID attributes or an empty one (401)', async () => {
    for (const subject of [
      [{ CN: ['carol'] }, { [UID_OID]: ['a'] }, { [UID_OID]: ['b'] }],
      [{ CN: ['carol'] }, { [UID_OID]: [''] }],
    ] as x509.JsonName[]) {
      const res = await whoami(s.url, await identityWithSubject(subject));
      assert.equal(res.status, 401, JSON.stringify(subject));
      assert.equal(res.body.reason, 'Unauthorized');
    }
  });

  it('ignores the UID attribute with the gate off', async () => {
    const carol = await identityWithSubject([{ CN: ['carol'] }, { [UID_OID]: ['a'] }, { [UID_OID]: ['b'] }]);
    const res = await whoami(off.url, carol).expect(201);
    assert.deepEqual(res.body.status.userInfo, { username: 'carol', groups: ['system:authenticated'] });
  });
});
