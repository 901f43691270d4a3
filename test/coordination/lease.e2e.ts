import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoordinationV1Api } from '@kubernetes/client-node';
import { testKubeConfig } from '../support/client-node.js';
import request from 'supertest';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { LeaseElector } from '../support/lease-elector.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { eventually } from '../support/eventually.js';

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases';

describe('coordination.k8s.io/v1 Leases', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;
  let leases: CoordinationV1Api;

  before(async () => {
    // The gate is set explicitly (never assume a default); test/features/gated-fields.e2e.ts covers both states.
    s = await startTestServer('leases', { PLINTH_FEATURE_GATES: 'CoordinatedLeaderElection=false' });
    api = request(s.url);
    leases = testKubeConfig(s.url).makeApiClient(CoordinationV1Api);
  });
  after(async () => s?.close());

  it('is discoverable as coordination.k8s.io/v1 leases and listed by kubectl with its holder', async () => {
    const disc = await api.get('/apis/coordination.k8s.io/v1').expect(200);
    const r = disc.body.resources.find((x: { name: string }) => x.name === 'leases');
    assert.equal(r.kind, 'Lease');
    assert.equal(r.namespaced, true);
    await api.post(LEASES).send({ metadata: { name: 'shown' }, spec: { holderIdentity: 'node-a', leaseDurationSeconds: 40 } }).expect(201);
    const kc = writeTestKubeconfig(s.url);
    const out = await kubectl(kc, ['get', 'leases', '-n', 'kube-system']);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /^NAME\s+HOLDER\s+AGE\n/);
    assert.match(out.stdout, /\nshown\s+node-a\s+/);
  });

  it('validates as upstream: leaseDurationSeconds above 0, leaseTransitions not negative', async () => {
    const bad = await api.post(LEASES).send({ metadata: { name: 'bad' }, spec: { leaseDurationSeconds: 0, leaseTransitions: -1 } }).expect(422);
    assert.equal(bad.body.reason, 'Invalid');
    assert.equal(
      bad.body.message,
      'Lease.coordination.k8s.io "bad" is invalid: [spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0, spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0]',
    );
    assert.deepEqual(
      bad.body.details.causes.map((c: { field: string }) => c.field),
      ['spec.leaseDurationSeconds', 'spec.leaseTransitions'],
    );
  });

  it('keeps MicroTime values, drops the gated strategy and preferredHolder while CoordinatedLeaderElection is off, and needs a resourceVersion to update', async () => {
    const created = await api
      .post(LEASES)
      .send({ metadata: { name: 'times' }, spec: { holderIdentity: 'a', renewTime: '2024-05-01T10:00:00.123456Z', strategy: 'OldestEmulationVersion', preferredHolder: 'b' } })
      .expect(201);
    assert.equal(created.body.spec.renewTime, '2024-05-01T10:00:00.123456Z');
    assert.equal(created.body.spec.strategy, undefined);
    assert.equal(created.body.spec.preferredHolder, undefined);
    const noRv = await api.put(`${LEASES}/times`).send({ metadata: { name: 'times' }, spec: { holderIdentity: 'b' } }).expect(422);
    assert.match(noRv.body.message, /metadata\.resourceVersion: Invalid value: "": must be specified for an update/);
    const updated = await api.put(`${LEASES}/times`).send({ ...created.body, spec: { ...created.body.spec, holderIdentity: 'b' } }).expect(200);
    assert.equal(updated.body.spec.holderIdentity, 'b');
  });

  it('creates a Lease with a PUT to a missing name, as upstream allows for leases', async () => {
    const res = await api.put(`${LEASES}/by-put`).send({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'by-put' }, spec: { holderIdentity: 'x' } }).expect(201);
    assert.ok(res.body.metadata.uid);
    assert.equal((await api.get(`${LEASES}/by-put`).expect(200)).body.spec.holderIdentity, 'x');
  });

  it('elects exactly one leader among two client-node candidates, and hands over when the leader dies', async () => {
    const timings = { leaseDurationMs: 4000, renewDeadlineMs: 3000, retryPeriodMs: 300 };
    const lock = { namespace: 'kube-system', name: 'my-controller' };
    const a = new LeaseElector(leases, 'candidate-a', lock, timings);
    const b = new LeaseElector(leases, 'candidate-b', lock, timings);
    a.start();
    b.start();
    try {
      await eventually(() => a.leading || b.leading, { timeoutMs: 15_000, message: 'a leader' });
      // Several renew periods later there is still exactly one, and the Lease names it.
      for (let i = 0; i < 5; i++) {
        await new Promise((r) => setTimeout(r, timings.retryPeriodMs));
        assert.equal(Number(a.leading) + Number(b.leading), 1);
      }
      const [leader, follower] = a.leading ? [a, b] : [b, a];
      const before = await leases.readNamespacedLease(lock);
      assert.equal(before.spec?.holderIdentity, leader.identity);
      await leader.stop();
      await eventually(() => follower.leading, { timeoutMs: 15_000, message: 'the follower takes over' });
      const after = await leases.readNamespacedLease(lock);
      assert.equal(after.spec?.holderIdentity, follower.identity);
      assert.equal(after.spec?.leaseTransitions, (before.spec?.leaseTransitions ?? 0) + 1);
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});
