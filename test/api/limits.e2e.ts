import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { WatchClient } from '../watch/support/watch-client.js';
import { effectiveReplicaLimit, FD_HEADROOM } from '../../apps/api/src/watch/watch-limits.js';
import { eventually } from '../support/eventually.js';

// Bounded resources with clean answers: watch limits per replica and per user, bounded metric labels.
describe('limits: watches and metric labels', () => {
  let s: TestServer;
  const open: WatchClient[] = [];

  before(async () => {
    s = await startTestServer('limits', { PLINTH_TENANTS: 'acme', PLINTH_MAX_WATCHES: '5', PLINTH_MAX_WATCHES_PER_USER: '3' });
  });
  after(async () => {
    for (const w of open) w.close();
    await s?.close();
  });

  async function watch(prefix = ''): Promise<WatchClient> {
    const w = await WatchClient.open(s.url, `${prefix}/api/v1/namespaces/default/configmaps?watch=1`, {}, false);
    open.push(w);
    return w;
  }

  it('answers 429 TooManyRequests with Retry-After past the per-user and per-replica limits, and frees slots when watches end', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await watch()).status, 200);
    const fourth = await watch();
    assert.equal(fourth.status, 429);
    assert.equal(fourth.headers['retry-after'], '1');
    await fourth.ended;
    const body = JSON.parse(fourth.raw);
    assert.equal(body.kind, 'Status');
    assert.equal(body.reason, 'TooManyRequests');
    assert.deepEqual(body.details, { retryAfterSeconds: 1 });
    assert.match(body.message, /the user has too many open watches/);

    // Another tenant's user has its own allowance, until the replica is full.
    assert.equal((await watch('/clusters/acme')).status, 200);
    assert.equal((await watch('/clusters/acme')).status, 200);
    const full = await watch('/clusters/acme');
    assert.equal(full.status, 429);
    await full.ended;
    assert.match(JSON.parse(full.raw).message, /this server has too many open watches/);
    // Health checks and ordinary requests still get through at the limit.
    await request(s.url).get('/healthz').expect(200);
    await request(s.url).get('/readyz').expect(200);
    await request(s.url).get('/api/v1/namespaces/default/configmaps').expect(200);

    open[0].close();
    const again = await eventually(async () => {
      const w = await watch();
      return w.status === 200 ? w : false;
    }, { timeoutMs: 5000, message: 'a watch admitted again' });
    assert.equal(again.status, 200);
  });

  it('keeps file descriptors for everything else: the replica limit stays below the open-file limit', () => {
    assert.equal(effectiveReplicaLimit(0, 65_536), 65_536 - FD_HEADROOM);
    assert.equal(effectiveReplicaLimit(100_000, 4096), 4096 - FD_HEADROOM);
    assert.equal(effectiveReplicaLimit(500, 65_536), 500);
    assert.equal(effectiveReplicaLimit(500, undefined), 500);
  });

  it('puts requests for resources nobody serves under one empty metric label', async () => {
    for (let i = 0; i < 5; i++) await request(s.url).get(`/apis/madeup${i}.example.com/v1/thing${i}s`).expect(404);
    await request(s.url).get('/api/v1/nonsense-resource').expect(404);
    const text = (await request(s.url).get('/metrics').expect(200)).text;
    assert.doesNotMatch(text, /madeup|thing\d|nonsense-resource/);
    assert.match(text, /plinth_http_requests_total\{verb="[a-z]+",group="",resource="",code="404"\} \d+/);
    assert.match(text, /plinth_http_requests_total\{verb="list",group="",resource="configmaps",code="200"\} \d+/);
  });
});
