import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { generateClientRequest } from '../../apps/api/src/pki/user-credentials.js';
import { certificateIdentity, type ClientIdentity, requestAs } from '../support/credentials.js';
import { eventually } from '../support/eventually.js';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { grantClusterRole } from '../support/rbac.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const A = '/clusters/acme';
const G = '/clusters/globex';
const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const SIGNER = 'kubernetes.io/kube-apiserver-client';

function csrBody(name: string, csrPem: string, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: Buffer.from(csrPem).toString('base64'), signerName: SIGNER, usages: ['digital signature', 'client auth'], ...extra },
  };
}

// Tenant users' credentials: a CertificateSigningRequest in acme, approved with kubectl by an owner, signed by
// the kube-apiserver-client signer; the certificate is bound to acme and refused everywhere else.
describe('CertificateSigningRequest flow', { timeout: 180_000 }, () => {
  let s: TestServer;
  let owner: ClientIdentity;
  let alice: ClientIdentity;
  /** alice's certificate issued in acme (the first test). */
  let issuedToAlice: ClientIdentity | undefined;

  before(async () => {
    s = await startTestServer('csr-flow');
    for (const name of ['acme', 'globex']) {
      await request(s.url)
        .post(TENANTS)
        .send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name }, spec: { owners: [{ kind: 'User', name: 'olivia' }] } })
        .expect(201);
    }
    await eventually(async () => (await request(s.url).get(`${A}${CSRS}`)).status === 200, { timeoutMs: 30_000, message: 'acme serves CSRs' });
    owner = await certificateIdentity('olivia');
    alice = await certificateIdentity('alice');
    // alice may ask for certificates (create and read requests) but not approve them.
    await request(s.url)
      .post(`${A}/apis/rbac.authorization.k8s.io/v1/clusterroles`)
      .send({ metadata: { name: 'csr-requester' }, rules: [{ apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests', 'certificatesigningrequests/approval'], verbs: ['create', 'get', 'list', 'update'] }] })
      .expect(201);
    await grantClusterRole(s.url, 'alice-requests', 'csr-requester', [{ kind: 'User', name: 'alice' }], A);
  });
  after(async () => s?.close());

  it('issues alice a certificate an owner approved with kubectl, valid in acme only (401 in globex and the platform scope)', async () => {
    const { keyPem, csrPem } = await generateClientRequest('alice', ['devs']);
    const created = await requestAs(s.url, alice).post(`${A}${CSRS}`).send(csrBody('alice', csrPem, { expirationSeconds: 3600 })).expect(201);
    assert.equal(created.body.spec.username, 'alice');
    assert.deepEqual(created.body.spec.groups, ['system:authenticated']);
    assert.deepEqual(created.body.status, {});
    const ownerConfig = writeTestKubeconfig(`${s.url}${A}`, owner);
    const pending = await kubectl(ownerConfig, ['get', 'csr', 'alice']);
    assert.equal(pending.code, 0, pending.stderr);
    assert.match(pending.stdout, /alice\s+\S+\s+kubernetes.io\/kube-apiserver-client\s+alice\s+60m\s+Pending/);
    const approved = await kubectl(ownerConfig, ['certificate', 'approve', 'alice']);
    assert.equal(approved.code, 0, approved.stderr);
    assert.match(approved.stdout, /certificatesigningrequest.certificates.k8s.io\/alice approved/);
    const issued = await eventually(
      async () => {
        const r = await request(s.url).get(`${A}${CSRS}/alice`).expect(200);
        return r.body.status.certificate ? r.body : false;
      },
      { timeoutMs: 30_000, message: 'alice\'s certificate is issued' },
    );
    assert.equal(issued.status.conditions[0].type, 'Approved');
    assert.equal(issued.status.conditions[0].reason, 'KubectlApprove');
    const certPem = Buffer.from(issued.status.certificate, 'base64').toString();
    const cert = new X509Certificate(certPem);
    assert.match(cert.subject, /CN=alice/);
    assert.match(cert.subject, /O=devs/);
    const lifetimeMs = Date.parse(cert.validTo) - Date.parse(cert.validFrom);
    assert.ok(lifetimeMs >= 3600_000 && lifetimeMs <= 3900_000, `lifetime ${lifetimeMs}`);
    const aliceCert: ClientIdentity = { caPem: owner.caPem, certPem, keyPem };
    issuedToAlice = aliceCert;
    const listed = await kubectl(ownerConfig, ['get', 'csr', 'alice']);
    assert.match(listed.stdout, /Approved,Issued/);

    const inAcme = await kubectl(writeTestKubeconfig(`${s.url}${A}`, aliceCert), ['auth', 'whoami', '-o', 'json']);
    assert.equal(inAcme.code, 0, inAcme.stderr);
    const who = JSON.parse(inAcme.stdout).status.userInfo;
    assert.equal(who.username, 'alice');
    assert.deepEqual(who.groups, ['devs', 'system:authenticated']);
    assert.deepEqual(who.extra, { 'tenancy.plinth.dev/tenant': ['acme'] });
    await requestAs(s.url, aliceCert).get(`${A}${CSRS}/alice`).expect(200);
    for (const prefix of [G, '']) {
      const refused = await requestAs(s.url, aliceCert).get(`${prefix}/api/v1/namespaces`).expect(401);
      assert.equal(refused.body.reason, 'Unauthorized');
    }
    const inGlobex = await kubectl(writeTestKubeconfig(`${s.url}${G}`, aliceCert), ['get', 'namespaces']);
    assert.notEqual(inGlobex.code, 0);
    assert.match(inGlobex.stderr, /Unauthorized|provide credentials/);
  });

  it('answers 403 when a user without approve on signers approves, and lets the owner deny', async () => {
    const { csrPem } = await generateClientRequest('bob');
    await requestAs(s.url, alice).post(`${A}${CSRS}`).send(csrBody('bob', csrPem)).expect(201);
    const config = writeTestKubeconfig(`${s.url}${A}`, alice);
    const out = await kubectl(config, ['certificate', 'approve', 'bob']);
    assert.notEqual(out.code, 0);
    assert.match(out.stderr, /certificatesigningrequests.certificates.k8s.io "bob" is forbidden: user not permitted to approve requests with signerName "kubernetes.io\/kube-apiserver-client"/);
    const denied = await kubectl(writeTestKubeconfig(`${s.url}${A}`, owner), ['certificate', 'deny', 'bob']);
    assert.equal(denied.code, 0, denied.stderr);
    const got = await request(s.url).get(`${A}${CSRS}/bob`).expect(200);
    assert.deepEqual(got.body.status.conditions.map((c: { type: string }) => c.type), ['Denied']);
    assert.equal(got.body.status.certificate, undefined);
    // Approved and Denied are exclusive, and a decision cannot be taken back.
    const both = await request(s.url).put(`${A}${CSRS}/bob/approval`).send({ ...got.body, status: { conditions: [...got.body.status.conditions, { type: 'Approved', status: 'True' }] } }).expect(422);
    assert.ok(both.body.details.causes.some((c: { field: string; message: string }) => c.field === 'status.conditions' && /mutually exclusive/.test(c.message)));
    const removed = await request(s.url).put(`${A}${CSRS}/bob/approval`).send({ ...got.body, status: { conditions: [] } }).expect(422);
    assert.ok(removed.body.details.causes.some((c: { message: string }) => /updates may not remove a condition of type "Denied"/.test(c.message)));
  });

  it('refuses system:masters (403 at creation), and the signer fails requests for other usages', async () => {
    const masters = await generateClientRequest('mallory', ['system:masters']);
    const refused = await request(s.url).post(`${A}${CSRS}`).send(csrBody('mallory', masters.csrPem)).expect(403);
    assert.match(refused.body.message, /use of kubernetes.io\/kube-apiserver-client signer with system:masters group is not allowed/);
    await request(s.url).post(`${CSRS}`).send(csrBody('mallory', masters.csrPem)).expect(403);
    const server = await generateClientRequest('web');
    await request(s.url).post(`${A}${CSRS}`).send(csrBody('web', server.csrPem, { usages: ['server auth'] })).expect(201);
    const approved = await kubectl(writeTestKubeconfig(`${s.url}${A}`, owner), ['certificate', 'approve', 'web']);
    assert.equal(approved.code, 0, approved.stderr);
    const failed = await eventually(
      async () => {
        const r = await request(s.url).get(`${A}${CSRS}/web`).expect(200);
        return r.body.status.conditions?.find((c: { type: string }) => c.type === 'Failed') ?? false;
      },
      { timeoutMs: 30_000, message: 'the signer fails the server-auth request' },
    );
    assert.equal(failed.reason, 'SignerValidationFailure');
    assert.equal(failed.message, 'invalid usage for client certificate: server auth');
    // Asking for another tenant's binding fails too: only the signer writes it, and only with the request's tenant.
    const forged = await generateClientRequest('eve', [], ['urn:plinth:tenant:globex']);
    await request(s.url).post(`${A}${CSRS}`).send(csrBody('eve', forged.csrPem)).expect(201);
    assert.equal((await kubectl(writeTestKubeconfig(`${s.url}${A}`, owner), ['certificate', 'approve', 'eve'])).code, 0);
    const refusedBinding = await eventually(
      async () => {
        const r = await request(s.url).get(`${A}${CSRS}/eve`).expect(200);
        return r.body.status.conditions?.find((c: { type: string }) => c.type === 'Failed') ?? false;
      },
      { timeoutMs: 30_000, message: 'the signer fails the forged binding' },
    );
    assert.equal(refusedBinding.message, 'the tenant binding URI may not be requested');
  });

  it('answers 422 with field causes for invalid requests', async () => {
    const { csrPem } = await generateClientRequest('carol');
    const bad = await request(s.url)
      .post(`${A}${CSRS}`)
      .send({
        apiVersion: 'certificates.k8s.io/v1',
        kind: 'CertificateSigningRequest',
        metadata: { name: 'carol' },
        spec: { request: Buffer.from('not a request').toString('base64'), signerName: 'nodomain', usages: ['client auth', 'client auth', 'flying'], expirationSeconds: 60 },
      })
      .expect(422);
    const fields = bad.body.details.causes.map((c: { field: string }) => c.field).sort();
    assert.deepEqual(fields, ['spec.expirationSeconds', 'spec.request', 'spec.signerName', 'spec.usages[1]', 'spec.usages[2]']);
    assert.ok(bad.body.details.causes.some((c: { message: string }) => /PEM block type must be CERTIFICATE REQUEST/.test(c.message)));
    const missing = await request(s.url)
      .post(`${A}${CSRS}`)
      .send({ apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'carol' }, spec: { request: Buffer.from(csrPem).toString('base64') } })
      .expect(422);
    assert.deepEqual(missing.body.details.causes.map((c: { field: string }) => c.field).sort(), ['spec.signerName', 'spec.usages']);
  });

  it('refuses alice\'s certificate once acme is deleted and a new tenant named acme is created (another tenant uid)', async () => {
    assert.ok(issuedToAlice, 'the first test issued a certificate');
    await requestAs(s.url, issuedToAlice).get(`${A}${CSRS}/alice`).expect(200);
    const deleting = await request(s.url).delete(`${TENANTS}/acme`);
    assert.ok(deleting.status === 200 || deleting.status === 202, `${deleting.status} ${deleting.text}`);
    await eventually(async () => (await request(s.url).get(`${TENANTS}/acme`)).status === 404, { timeoutMs: 60_000, message: 'acme is gone' });
    await request(s.url)
      .post(TENANTS)
      .send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'acme' }, spec: { owners: [{ kind: 'User', name: 'alice' }] } })
      .expect(201);
    // alice owns the new acme, so only the certificate's binding to the earlier acme can refuse her.
    await requestAs(s.url, await certificateIdentity('alice')).get(`${A}/api/v1/namespaces`).expect(200);
    const refused = await requestAs(s.url, issuedToAlice).get(`${A}/api/v1/namespaces`).expect(401);
    assert.equal(refused.body.reason, 'Unauthorized');
  });
});
