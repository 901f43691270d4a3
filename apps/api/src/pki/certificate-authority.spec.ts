import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { CertificateAuthority, subjectAltNames } from './certificate-authority.js';
import { renderKubeconfig } from './kubeconfig.writer.js';
import { loadOrCreatePki, readCaBundle } from './pki-store.js';

describe('PKI', () => {
  it('generates a CA and leaves it signs: client (CN, O) and server (SANs) certificates', async () => {
    const ca = await CertificateAuthority.generate('test-ca', 3650);
    const caCert = new X509Certificate(ca.certPem);
    assert.equal(caCert.ca, true);
    assert.ok(new Date(caCert.validTo).getTime() > Date.now() + 9 * 365 * 86400_000);
    const client = await ca.issue({ commonName: 'jane', organizations: ['a', 'b'], usage: 'client', validDays: 1 });
    const c = new X509Certificate(client.certPem);
    assert.ok(c.verify(caCert.publicKey));
    assert.equal(c.ca, false);
    assert.match(c.subject, /CN=jane/);
    assert.match(c.subject, /O=a/);
    assert.match(c.subject, /O=b/);
    assert.deepEqual(c.keyUsage, ['1.3.6.1.5.5.7.3.2']);
    const server = await ca.issue({ commonName: 's', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'], usage: 'server', validDays: 1 });
    assert.deepEqual(subjectAltNames(server.certPem), { dns: ['localhost'], ip: ['127.0.0.1'] });
    const reloaded = await CertificateAuthority.load(ca.certPem, ca.keyPem);
    const again = await reloaded.issue({ commonName: 'x', usage: 'client', validDays: 1 });
    assert.ok(new X509Certificate(again.certPem).verify(caCert.publicKey));
  });

  it('creates the PKI once in the data folder (owner-only) and reuses it; concurrent starts agree', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'plinth-pki-spec-'));
    const [a, b] = await Promise.all([loadOrCreatePki(dir, ['plinth.example']), loadOrCreatePki(dir, ['plinth.example'])]);
    assert.equal(a.caPem, b.caPem);
    assert.equal(a.serviceAccountKeyPem, b.serviceAccountKeyPem);
    assert.deepEqual(readdirSync(path.join(dir, 'pki')).sort(), ['admin.crt', 'admin.key', 'ca.crt', 'ca.key', 'sa.key', 'serving.pem']);
    assert.equal(statSync(path.join(dir, 'pki', 'ca.key')).mode & 0o077, 0);
    const c = await loadOrCreatePki(dir, ['plinth.example']);
    assert.equal(c.serving.certPem, (await loadOrCreatePki(dir, [])).serving.certPem);
    assert.ok(subjectAltNames(c.serving.certPem).dns.includes('plinth.example'));
    const wider = await loadOrCreatePki(dir, ['other.example']);
    assert.notEqual(wider.serving.certPem, c.serving.certPem);
    assert.equal(wider.caPem, a.caPem);
    assert.match(new X509Certificate(a.admin.certPem).subject, /CN=plinth-admin\nO=system:masters/);
  });

  it('renders a kubeconfig with CA data, the client certificate and a context per tenant', () => {
    const text = renderKubeconfig('https://127.0.0.1:6443', ['acme'], { caPem: 'CA', clientCertPem: 'CERT', clientKeyPem: 'KEY' });
    assert.match(text, /server: https:\/\/127\.0\.0\.1:6443\/clusters\/acme/);
    assert.match(text, new RegExp(`certificate-authority-data: ${Buffer.from('CA').toString('base64')}`));
    assert.match(text, new RegExp(`client-certificate-data: ${Buffer.from('CERT').toString('base64')}`));
    assert.match(text, /current-context: plinth-default/);
  });

  it('reads a root CA file of several certificates, and refuses one without a certificate or with a broken one, naming the file', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'plinth-root-ca-'));
    const [a, b] = [await CertificateAuthority.generate('root-a', 1), await CertificateAuthority.generate('root-b', 1)];
    const bundle = path.join(dir, 'bundle.crt');
    writeFileSync(bundle, `# rotation: old and new root\n${a.certPem}\n${b.certPem}`);
    const read = await readCaBundle(bundle);
    assert.deepEqual(
      read.split('-----END CERTIFICATE-----\n').filter(Boolean).map((p) => new X509Certificate(`${p}-----END CERTIFICATE-----`).subject),
      ['CN=root-a', 'CN=root-b'],
    );
    const empty = path.join(dir, 'empty.crt');
    writeFileSync(empty, 'not a certificate\n');
    await assert.rejects(readCaBundle(empty), new RegExp(`error parsing root-ca-file at ${empty}: data does not contain any valid`));
    const broken = path.join(dir, 'broken.crt');
    writeFileSync(broken, a.certPem.replace(/\n[A-Za-z0-9+/]{20}/, '\n!!!!'));
    await assert.rejects(readCaBundle(broken), new RegExp(`error parsing root-ca-file at ${broken}: `));
  });
});
