import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '@plinth/apimachinery';
import { CertificateAuthority } from '../pki/certificate-authority.js';
import { clientCertificateValidity, clientUsagesError, csrIsStale, MAX_CLIENT_CERTIFICATE_SECONDS } from './client-signer-policy.js';

const NOW = new Date('2026-01-10T12:00:00Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString();
const H = 3600_000;

function csr(created: string, conditions: Array<{ type: string; lastUpdateTime: string }> = [], certificate?: string): KubeObject {
  return { metadata: { name: 'x', creationTimestamp: created }, status: { conditions: conditions.map((c) => ({ ...c, status: 'True' })), ...(certificate ? { certificate } : {}) } } as KubeObject;
}

describe('kube-apiserver-client signer policy', () => {
  it("takes client auth, with digital signature and key encipherment at most (upstream's usages)", () => {
    assert.equal(clientUsagesError(['client auth']), undefined);
    assert.equal(clientUsagesError(['digital signature', 'key encipherment', 'client auth']), undefined);
    assert.equal(clientUsagesError(['digital signature']), 'missing required usage for client certificate: client auth');
    assert.equal(clientUsagesError(['client auth', 'server auth']), 'invalid usage for client certificate: server auth');
  });

  it('issues for the requested duration, capped at one year, backdated five minutes', () => {
    const hour = clientCertificateValidity(NOW, 3600);
    assert.equal(hour.notBefore.getTime(), NOW.getTime() - 5 * 60_000);
    assert.equal(hour.notAfter.getTime(), NOW.getTime() + H);
    const capped = clientCertificateValidity(NOW, 10 * MAX_CLIENT_CERTIFICATE_SECONDS);
    assert.equal(capped.notAfter.getTime() - capped.notBefore.getTime(), MAX_CLIENT_CERTIFICATE_SECONDS * 1000);
    assert.deepEqual(clientCertificateValidity(NOW, undefined), capped);
  });
});

describe("csrcleaner's decision", () => {
  it('removes pending requests after 24 h, denied and failed after 1 h, issued after 1 h', () => {
    assert.equal(csrIsStale(csr(ago(23 * H)), NOW), false);
    assert.equal(csrIsStale(csr(ago(25 * H)), NOW), true);
    assert.equal(csrIsStale(csr(ago(2 * H), [{ type: 'Denied', lastUpdateTime: ago(30 * 60_000) }]), NOW), false);
    assert.equal(csrIsStale(csr(ago(2 * H), [{ type: 'Denied', lastUpdateTime: ago(61 * 60_000) }]), NOW), true);
    assert.equal(csrIsStale(csr(ago(2 * H), [{ type: 'Approved', lastUpdateTime: ago(2 * H) }, { type: 'Failed', lastUpdateTime: ago(2 * H) }]), NOW), true);
    // Approved but never issued: kept (the signer may still issue it), as upstream.
    assert.equal(csrIsStale(csr(ago(30 * H), [{ type: 'Approved', lastUpdateTime: ago(2 * H) }]), NOW), false);
    assert.equal(csrIsStale(csr(ago(2 * H), [{ type: 'Approved', lastUpdateTime: ago(2 * H) }], 'QQ=='), NOW), true);
    assert.equal(csrIsStale(csr(ago(10 * 60_000), [{ type: 'Approved', lastUpdateTime: ago(10 * 60_000) }], 'QQ=='), NOW), false);
  });

  it('removes a request whose issued certificate has expired', async () => {
    const ca = await CertificateAuthority.generate('t', 1);
    const pair = await ca.issue({ commonName: 'a', usage: 'client', validDays: 1 });
    const recently = new Date(Date.now() - 10 * 60_000).toISOString();
    const issued = csr(recently, [{ type: 'Approved', lastUpdateTime: recently }], Buffer.from(pair.certPem).toString('base64'));
    assert.equal(csrIsStale(issued, new Date()), false);
    // Three days on, the one-day certificate has expired (the approval alone would also be old by then: see below).
    assert.equal(csrIsStale(issued, new Date(Date.now() + 3 * 24 * H)), true);
    const undated = csr(recently, [{ type: 'Approved', lastUpdateTime: '' }], Buffer.from(pair.certPem).toString('base64'));
    assert.equal(csrIsStale(undated, new Date(Date.now() + 3 * 24 * H)), true);
    assert.equal(csrIsStale(undated, new Date()), false);
  });
});
