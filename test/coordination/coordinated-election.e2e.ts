import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { eventually } from '../support/eventually.js';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { startTestServerOn, type TestServer } from '../support/test-server.js';

const NS = 'election';
const CANDIDATES = `/apis/coordination.k8s.io/v1beta1/namespaces/${NS}/leasecandidates`;
const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`;
const LEASE = 'my-controller';
const microTime = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

/**
 * One contender, as client-go's coordinated leader election client does it:
 * it keeps a LeaseCandidate, answers the server's pings (renewTime after
 * pingTime), and, while the Lease names it, renews the Lease unless the
 * server named another preferredHolder; it never takes the Lease itself.
 * Polls every 200 ms.
 */
class Contender {
  /** The holder it last saw in the Lease. */
  seenHolder: string | undefined;
  private stopped = false;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly url: string,
    readonly name: string,
    private readonly versions: { binaryVersion: string; emulationVersion: string },
  ) {}

  async start(): Promise<void> {
    await request(this.url)
      .post(CANDIDATES)
      .send({ apiVersion: 'coordination.k8s.io/v1beta1', kind: 'LeaseCandidate', metadata: { name: this.name }, spec: { leaseName: LEASE, strategy: 'OldestEmulationVersion', renewTime: microTime(Date.now()), ...this.versions } })
      .expect(201);
    this.loop = this.run();
  }

  /** Stops answering pings and renewing: as a process that died. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const api = request(this.url);
      const me = await api.get(`${CANDIDATES}/${this.name}`);
      if (me.status === 200) {
        const { pingTime, renewTime } = me.body.spec;
        if (pingTime && (!renewTime || Date.parse(renewTime) < Date.parse(pingTime))) {
          await api.put(`${CANDIDATES}/${this.name}`).send({ ...me.body, spec: { ...me.body.spec, renewTime: microTime(Date.now()) } });
        }
      }
      const lease = await api.get(`${LEASES}/${LEASE}`);
      if (lease.status === 200) {
        this.seenHolder = lease.body.spec.holderIdentity;
        const preferred = lease.body.spec.preferredHolder;
        // Coordinated, the holder steps down for the server's preferred holder: it stops renewing and the Lease runs out.
        if (this.seenHolder === this.name && (!preferred || preferred === this.name)) await api.put(`${LEASES}/${LEASE}`).send({ ...lease.body, spec: { ...lease.body.spec, renewTime: microTime(Date.now()) } });
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

describe('coordinated leader election (KEP-4355): LeaseCandidate v1beta1 and the election controller', () => {
  let tdb: TestDatabase;
  let s: TestServer;
  const env = { PLINTH_FEATURE_GATES: 'CoordinatedLeaderElection=true', PLINTH_RUNTIME_CONFIG: 'coordination.k8s.io/v1beta1=true' };

  before(async () => {
    tdb = await createTestDatabase('coordinated-election');
    s = await startTestServerOn(tdb, env);
    await request(s.url).post('/api/v1/namespaces').send({ metadata: { name: NS } }).expect(201);
  });
  after(async () => {
    await s?.close();
    await tdb?.drop();
  });

  it('validates LeaseCandidates as upstream', async () => {
    const api = request(s.url);
    const body = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'coordination.k8s.io/v1beta1', kind: 'LeaseCandidate', metadata: { name }, spec });
    const causes = async (name: string, spec: Record<string, unknown>) =>
      ((await api.post(CANDIDATES).send(body(name, spec)).expect(422)).body.details.causes as Array<{ field: string; message: string }>).map((c) => `${c.field}: ${c.message}`);
    assert.deepEqual(await causes('a', { leaseName: LEASE, strategy: 'OldestEmulationVersion' }), [
      'spec.binaryVersion: Required value',
      "spec.emulationVersion: Required value: must be specified when `strategy` is 'OldestEmulationVersion'",
    ]);
    assert.deepEqual(await causes('a', { leaseName: LEASE, strategy: 'OldestEmulationVersion', binaryVersion: '1.34.0', emulationVersion: '1.35.0' }), [
      'spec.binaryVersion: Invalid value: "1.34.0": must be greater than or equal to `emulationVersion`',
    ]);
    assert.deepEqual(await causes('a', { leaseName: LEASE, strategy: 'Youngest', binaryVersion: 'v1.35' }), [
      'spec.binaryVersion: Invalid value: "v1.35": must be a valid semantic version',
      'spec.strategy.strategy: Unsupported value: "Youngest": supported values: "OldestEmulationVersion"',
    ]);
    const created = await api.post(CANDIDATES).send(body('custom', { leaseName: 'other', strategy: 'example.com/mine', binaryVersion: '1.35.0' })).expect(201);
    const moved = await api.put(`${CANDIDATES}/custom`).send({ ...created.body, spec: { ...created.body.spec, leaseName: 'elsewhere' } }).expect(422);
    assert.equal(moved.body.details.causes[0].field, 'spec.leaseName');
    await api.delete(`${CANDIDATES}/custom`).expect(200);
  });

  it('elects the candidate with the oldest emulation version (a later, better one becomes preferredHolder and the holder steps down); the other sees it; when the leader goes silent the other is elected', async () => {
    const older = new Contender(s.url, 'apiserver-a', { binaryVersion: '1.35.0', emulationVersion: '1.34.0' });
    const newer = new Contender(s.url, 'apiserver-b', { binaryVersion: '1.35.0', emulationVersion: '1.35.0' });
    await newer.start();
    await older.start();
    try {
      const lease = await eventually(
        async () => {
          const r = await request(s.url).get(`${LEASES}/${LEASE}`).expect(200);
          assert.equal(r.body.spec.holderIdentity, 'apiserver-a');
          return r.body;
        },
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      assert.equal(lease.spec.strategy, 'OldestEmulationVersion');
      assert.equal(lease.spec.leaseDurationSeconds, 5);
      await eventually(async () => assert.equal(newer.seenHolder, 'apiserver-a'), { timeoutMs: 5_000, intervalMs: 100 });

      await older.stop();
      await eventually(
        async () => {
          const r = await request(s.url).get(`${LEASES}/${LEASE}`).expect(200);
          assert.equal(r.body.spec.holderIdentity, 'apiserver-b');
        },
        { timeoutMs: 45_000, intervalMs: 250 },
      );
      await eventually(async () => assert.equal(newer.seenHolder, 'apiserver-b'), { timeoutMs: 5_000, intervalMs: 100 });
      // The server pinged both; the silent one never answered (its renewTime is before its pingTime).
      const silent = (await request(s.url).get(`${CANDIDATES}/apiserver-a`).expect(200)).body.spec;
      assert.ok(Date.parse(silent.renewTime) < Date.parse(silent.pingTime), JSON.stringify(silent));
      // The live one answers: the server may ping it again at any time, so it is seen answered once, not at every read.
      await eventually(
        async () => {
          const answered = (await request(s.url).get(`${CANDIDATES}/apiserver-b`).expect(200)).body.spec;
          assert.ok(Date.parse(answered.renewTime) >= Date.parse(answered.pingTime), JSON.stringify(answered));
        },
        { timeoutMs: 20_000, intervalMs: 100 },
      );

      // A better candidate joining while the holder renews becomes the preferred holder, as upstream.
      const oldest = new Contender(s.url, 'apiserver-c', { binaryVersion: '1.34.0', emulationVersion: '1.33.0' });
      await oldest.start();
      try {
        await eventually(
          async () => {
            const r = await request(s.url).get(`${LEASES}/${LEASE}`).expect(200);
            assert.equal(r.body.spec.preferredHolder, 'apiserver-c', JSON.stringify(r.body.spec));
            assert.equal(r.body.spec.holderIdentity, 'apiserver-b');
          },
          { timeoutMs: 30_000, intervalMs: 250 },
        );
      } finally {
        await oldest.stop();
      }
    } finally {
      await older.stop();
      await newer.stop();
    }
  });

  it('kubectl lists candidates with upstream columns', async () => {
    const out = await kubectl(writeTestKubeconfig(s.url), ['get', 'leasecandidates', '-n', NS]);
    assert.equal(out.code, 0, out.stderr);
    const lines = out.stdout.trim().split('\n');
    assert.match(lines[0], /^NAME\s+LEASENAME\s+BINARYVERSION\s+EMULATIONVERSION\s+AGE$/);
    assert.match(lines.find((l) => l.startsWith('apiserver-a')) ?? '', /^apiserver-a\s+my-controller\s+1\.35\.0\s+1\.34\.0\s+\d+s$/);
  });

  it('deletes candidates not renewed for 30 minutes (the LeaseCandidate collector, at start and every 30 minutes)', async () => {
    await request(s.url)
      .post(CANDIDATES)
      .send({
        apiVersion: 'coordination.k8s.io/v1beta1',
        kind: 'LeaseCandidate',
        metadata: { name: 'gone' },
        spec: { leaseName: 'abandoned', strategy: 'OldestEmulationVersion', binaryVersion: '1.35.0', emulationVersion: '1.35.0', renewTime: microTime(Date.now() - 31 * 60_000) },
      })
      .expect(201);
    await request(s.url)
      .post(CANDIDATES)
      .send({
        apiVersion: 'coordination.k8s.io/v1beta1',
        kind: 'LeaseCandidate',
        metadata: { name: 'recent' },
        spec: { leaseName: 'abandoned', strategy: 'OldestEmulationVersion', binaryVersion: '1.35.0', emulationVersion: '1.35.0', renewTime: microTime(Date.now() - 29 * 60_000) },
      })
      .expect(201);
    // The collector runs when the controller starts: restart the server on the same database.
    await s.close();
    s = await startTestServerOn(tdb, env);
    await eventually(async () => {
      await request(s.url).get(`${CANDIDATES}/gone`).expect(404);
    }, { timeoutMs: 20_000, intervalMs: 250 });
    await request(s.url).get(`${CANDIDATES}/recent`).expect(200);
  });
});
