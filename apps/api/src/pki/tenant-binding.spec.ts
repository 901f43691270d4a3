import 'reflect-metadata';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import * as x509 from '@peculiar/x509';
import { generateClientRequest } from './user-credentials.js';
import { CertificateAuthority } from './certificate-authority.js';
import { boundTenant, tenantBindingName } from './tenant-binding.js';

async function signed(names: x509.JsonGeneralName[]): Promise<Buffer> {
  const ca = await CertificateAuthority.generate('t', 1);
  const req = new x509.Pkcs10CertificateRequest((await generateClientRequest('alice')).csrPem);
  const now = Date.now();
  const pem = await ca.sign({
    publicKey: req.publicKey,
    subject: req.subjectName,
    notBefore: new Date(now),
    notAfter: new Date(now + 3600_000),
    keyUsages: 0,
    extKeyUsages: [x509.ExtendedKeyUsage.clientAuth],
    extensions: names.length > 0 ? [new x509.SubjectAlternativeNameExtension(names)] : [],
  });
  return new X509Certificate(pem).raw;
}

describe('tenant binding of client certificates', () => {
  it('reads the tenant back, and nothing from a certificate without a binding', async () => {
    assert.deepEqual(boundTenant(await signed([{ type: 'dns', value: 'a.example' }, tenantBindingName('acme', 'u-1')])), { tenant: 'acme', uid: 'u-1' });
    assert.equal(boundTenant(await signed([{ type: 'url', value: 'https://example.com' }])), undefined);
    assert.equal(boundTenant(await signed([])), undefined);
  });

  it('refuses two bindings or an empty one (whatever the case of the prefix)', async () => {
    assert.throws(() => boundTenant(Buffer.alloc(0)));
    const two = await signed([tenantBindingName('acme', 'u-1'), { type: 'url', value: 'URN:PLINTH:TENANT:globex/u-2' }]);
    assert.throws(() => boundTenant(two), /malformed tenant binding/);
    const empty = await signed([{ type: 'url', value: 'urn:plinth:tenant:' }]);
    assert.throws(() => boundTenant(empty), /malformed tenant binding/);
    const withoutUid = await signed([{ type: 'url', value: 'urn:plinth:tenant:acme' }]);
    assert.throws(() => boundTenant(withoutUid), /malformed tenant binding/);
  });
});
