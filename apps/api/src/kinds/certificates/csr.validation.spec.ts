import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '@plinth/apimachinery';
import { generateClientRequest } from '../../pki/user-credentials.js';
import { validateCertificateKept, validateConditionsKept, validateCsr, validateSignerName } from './csr.validation.js';
import { csrApprovalStrategy, csrStatusStrategy, csrStrategy } from './csr.strategy.js';
import type { StrategyContext } from '../../registry/resource-definition.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

async function csr(spec: Record<string, unknown> = {}, status?: Record<string, unknown>): Promise<KubeObject> {
  const { csrPem } = await generateClientRequest('alice');
  return { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'a' }, spec: { request: b64(csrPem), signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'], ...spec }, ...(status ? { status } : {}) };
}

const fields = (errs: Array<{ field: string }>) => errs.map((e) => e.field);

describe('CertificateSigningRequest validation', () => {
  it('accepts a well-formed request', async () => {
    assert.deepEqual(await validateCsr(await csr({ expirationSeconds: 600 })), []);
  });

  it('refuses a request that is not a PEM CERTIFICATE REQUEST, or whose signature does not verify', async () => {
    const notPem = await validateCsr(await csr({ request: b64('hello') }));
    assert.deepEqual(fields(notPem), ['spec.request']);
    assert.match((notPem[0] as { detail: string }).detail, /PEM block type must be CERTIFICATE REQUEST/);
    const good = await csr();
    const pem = Buffer.from((good.spec as { request: string }).request, 'base64').toString();
    // Flip one character of the body's end (inside the signature).
    const i = pem.indexOf('-----END') - 6;
    const tampered = pem.slice(0, i) + (pem[i] === 'A' ? 'B' : 'A') + pem.slice(i + 1);
    assert.deepEqual(fields(await validateCsr(await csr({ request: b64(tampered) }))), ['spec.request']);
    assert.deepEqual(fields(await validateCsr(await csr({ request: '%%%' }))), ['spec.request']);
  });

  it('requires usages, known and without duplicates', async () => {
    assert.deepEqual(fields(await validateCsr(await csr({ usages: [] }))), ['spec.usages']);
    assert.deepEqual(fields(await validateCsr(await csr({ usages: ['client auth', 'nope', 'client auth'] }))), ['spec.usages[1]', 'spec.usages[2]']);
  });

  it('requires expirationSeconds of at least 600', async () => {
    const errs = await validateCsr(await csr({ expirationSeconds: 599 }));
    assert.deepEqual(fields(errs), ['spec.expirationSeconds']);
    assert.match((errs[0] as { detail: string }).detail, /may not specify a duration less than 600 seconds/);
  });

  it("validates signer names as upstream's ValidateSignerName", () => {
    assert.deepEqual(validateSignerName('f', 'example.com/my-signer'), []);
    assert.equal(validateSignerName('f', '')[0].type, 'FieldValueRequired');
    assert.match((validateSignerName('f', 'a/b/c')[0] as { detail: string }).detail, /fully qualified domain and path/);
    assert.match((validateSignerName('f', 'example/signer')[0] as { detail: string }).detail, /at least two segments/);
    assert.match((validateSignerName('f', 'Example.com/signer')[0] as { detail: string }).detail, /validating label "Example"/);
    assert.match((validateSignerName('f', 'example.com/Signer')[0] as { detail: string }).detail, /validating path "Signer"/);
    assert.equal(validateSignerName('f', `${'a.'.repeat(130)}com/x`)[0].type, 'FieldValueTooLong');
  });

  it('refuses the legacy signer in v1', async () => {
    const errs = await validateCsr(await csr({ signerName: 'kubernetes.io/legacy-unknown' }));
    assert.match((errs[0] as { detail: string }).detail, /legacy signerName is not allowed/);
  });

  it('keeps Approved and Denied True, exclusive and unique, and an issued certificate PEM', async () => {
    const both = await validateCsr(await csr({}, { conditions: [{ type: 'Approved', status: 'True' }, { type: 'Denied', status: 'True' }] }));
    assert.deepEqual(fields(both), ['status.conditions']);
    const falseApproved = await validateCsr(await csr({}, { conditions: [{ type: 'Approved', status: 'False' }] }));
    assert.deepEqual(fields(falseApproved), ['status.conditions[0].status']);
    const dup = await validateCsr(await csr({}, { conditions: [{ type: 'X', status: 'True' }, { type: 'X', status: 'Maybe' }] }));
    assert.deepEqual(fields(dup).sort(), ['status.conditions[1].status', 'status.conditions[1].type']);
    const notCert = await validateCsr(await csr({}, { certificate: b64('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n') }));
    assert.deepEqual(fields(notCert), ['status.certificate']);
  });

  it('forbids removing Approved, Denied or Failed, and changing an issued certificate', async () => {
    const old = await csr({}, { conditions: [{ type: 'Approved', status: 'True' }, { type: 'Failed', status: 'True' }], certificate: 'QQ==' });
    const errs = validateConditionsKept(await csr({}, { conditions: [] }), old);
    assert.deepEqual(errs.map((e) => (e as { detail: string }).detail), ['updates may not remove a condition of type "Approved"', 'updates may not remove a condition of type "Failed"']);
    assert.deepEqual(fields(validateCertificateKept(await csr({}, { certificate: 'Qg==' }), old)), ['status.certificate']);
    assert.deepEqual(validateCertificateKept(await csr({}, { certificate: 'QQ==' }), old), []);
  });
});

describe('CertificateSigningRequest strategies', () => {
  const ctx = { tenant: 'acme', user: { username: 'alice', uid: 'u1', groups: ['devs'], extra: { k: ['v'] } } } as unknown as StrategyContext;

  it('stamps the requester and clears status on create, whatever the client sent', async () => {
    const obj = await csr({ username: 'root', groups: ['system:masters'] }, { conditions: [{ type: 'Approved', status: 'True' }] });
    csrStrategy.prepareForCreate(obj, ctx);
    assert.deepEqual(obj.status, {});
    const spec = obj.spec as Record<string, unknown>;
    assert.deepEqual([spec.username, spec.uid, spec.groups, spec.extra], ['alice', 'u1', ['devs'], { k: ['v'] }]);
  });

  it('approval changes only the conditions (timestamps filled); status keeps Approved and Denied as they were', async () => {
    const old = await csr({ username: 'alice' }, {});
    const next = await csr({ username: 'mallory', usages: ['any'] }, { certificate: 'QQ==', conditions: [{ type: 'Approved', status: 'True' }] });
    csrApprovalStrategy.prepareForUpdate(next, old, ctx);
    assert.equal((next.spec as { username: string }).username, 'alice');
    assert.equal((next.status as { certificate?: string }).certificate, undefined);
    const [c] = (next.status as { conditions: Array<Record<string, string>> }).conditions;
    assert.ok(c.lastUpdateTime && c.lastTransitionTime);
    const signed = await csr({}, { certificate: 'QQ==', conditions: [{ type: 'Denied', status: 'True' }] });
    csrStatusStrategy.prepareForUpdate(signed, next, ctx);
    assert.deepEqual((signed.status as { conditions: Array<{ type: string }> }).conditions.map((x) => x.type), ['Approved']);
  });
});
