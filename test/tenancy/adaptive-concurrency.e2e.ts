import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { certificateIdentity, type ClientIdentity, requestAs } from '../support/credentials.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { eventually } from '../support/eventually.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const FLOOD_CLIENTS = 48;
const QUIET_REQUESTS = 20;
const MAX_SEATS = 32;

async function adaptiveLimit(url: string): Promise<number> {
  const metrics = (await request(url).get('/metrics').expect(200)).text;
  const line = metrics.split('\n').find((l) => l.startsWith('plinth_flowcontrol_adaptive_limit '));
  return Number(line?.split(' ')[1]);
}

// Adaptive concurrency: under a plain flood the replica-wide seat limit shrinks with the event loop's delay,
// so the flood's excess waits in its fair queue and a light tenant's requests go first.
describe('adaptive replica-wide concurrency under a flood', { timeout: 180_000 }, () => {
  let s: TestServer;
  let alice: ClientIdentity;
  let bob: ClientIdentity;

  before(async () => {
    s = await startTestServer('adaptive-concurrency', {
      PLINTH_MAX_REQUESTS_INFLIGHT: String(MAX_SEATS),
      PLINTH_TENANT_QUEUE_LENGTH: '1000',
      PLINTH_TENANT_QUEUE_WAIT_MS: '60000',
      // Targets any flood passes (the loop's mean delay over 1 ms while it is busy 1% of the time), so the limit goes to
      // its minimum whatever the machine.
      PLINTH_ADAPTIVE_CONCURRENCY: 'on',
      PLINTH_ADAPTIVE_CONCURRENCY_TARGET_DELAY_MS: '1',
      PLINTH_ADAPTIVE_CONCURRENCY_TARGET_UTILIZATION: '1',
      PLINTH_ADAPTIVE_CONCURRENCY_MIN_SEATS: '2',
    });
    alice = await certificateIdentity('alice');
    bob = await certificateIdentity('bob');
    for (const [name, owner] of [['flood', 'alice'], ['quiet', 'bob']] as const) {
      await request(s.url)
        .post(TENANTS)
        .send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name }, spec: { owners: [{ kind: 'User', name: owner }] } })
        .expect(201);
    }
    await requestAs(s.url, bob).post('/clusters/quiet/api/v1/namespaces/default/configmaps').send({ metadata: { name: 'seed' } }).expect(201);
  });
  after(async () => {
    await s?.close();
  });

  it('keeps the limit low while one tenant floods, serves the other tenant\'s requests ahead of the flood\'s backlog, and still serves the flood', async () => {
    const flooder = requestAs(s.url, alice);
    const statuses = new Map<number, number>();
    let served = 0;
    let stop = false;
    const flood = Promise.all(
      Array.from({ length: FLOOD_CLIENTS }, async (_, c) => {
        for (let i = 0; !stop; i++) {
          const res = i % 2 === 0 ? await flooder.post('/clusters/flood/api/v1/namespaces/default/configmaps').send({ metadata: { name: `f-${c}-${i}` } }) : await flooder.get('/clusters/flood/api/v1/namespaces/default/configmaps?limit=1');
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          served++;
        }
      }),
    );
    try {
      await eventually(async () => (await adaptiveLimit(s.url)) <= 4, { timeoutMs: 60_000, intervalMs: 100, message: 'the limit is low under the flood' });
      const quiet = requestAs(s.url, bob);
      const before = served;
      const answers: number[] = [];
      for (let i = 0; i < QUIET_REQUESTS; i++) {
        answers.push(i % 2 === 0 ? (await quiet.post('/clusters/quiet/api/v1/namespaces/default/configmaps').send({ metadata: { name: `q${i}` } })).status : (await quiet.get('/clusters/quiet/api/v1/namespaces/default/configmaps/seed')).status);
      }
      const floodServedMeanwhile = served - before;
      assert.deepEqual(answers, Array.from({ length: QUIET_REQUESTS }, (_, i) => (i % 2 === 0 ? 201 : 200)), 'the quiet tenant got everything');
      // With the replica's seats at a handful, each quiet request waits for the next free seat (it is behind the flood in
      // virtual time) and runs beside a few flood requests; at the configured 32 it would run beside 31.
      assert.ok(floodServedMeanwhile <= QUIET_REQUESTS * 10, `the flood was served ${floodServedMeanwhile} times during the quiet tenant's ${QUIET_REQUESTS} requests`);
      assert.ok(floodServedMeanwhile >= 1, 'the flood still progresses');
    } finally {
      stop = true;
      await flood;
    }
    assert.deepEqual([...statuses.keys()].sort(), [200, 201], `the flood was never refused: ${JSON.stringify([...statuses])}`);
  });
});
