import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { adminIdentity } from '../support/credentials.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { WatchClient } from './support/watch-client.js';
import { WatchService } from '../../apps/api/src/watch/watch.service.js';
import { eventually } from '../support/eventually.js';

// A watcher that stops reading overflows its bounded buffer and is closed; the others do not notice.
describe('watch: slow consumers', { timeout: 120_000 }, () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;
  let stalled: tls.TLSSocket;
  let fast: WatchClient;

  before(async () => {
    s = await startTestServer('watch_slow', { PLINTH_WATCH_BUFFER_BYTES: '65536' });
    api = request(s.url);
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'slow' } }).expect(201);
  });
  after(async () => {
    stalled?.destroy();
    fast?.close();
    await s.close();
  });

  it('closes a watch whose client stopped reading, counts it, and keeps serving the others on time', async () => {
    const from = (await api.get('/api/v1/namespaces/slow/configmaps').expect(200)).body.metadata.resourceVersion;
    const { port } = new URL(s.url);
    const id = adminIdentity();
    stalled = tls.connect({ port: Number(port), host: '127.0.0.1', ca: id.caPem, cert: id.certPem, key: id.keyPem, ALPNProtocols: ['http/1.1'] });
    await new Promise((r) => stalled.once('secureConnect', r));
    stalled.write(`GET /api/v1/namespaces/slow/configmaps?watch=true&resourceVersion=${from} HTTP/1.1\r\nHost: x\r\n\r\n`);
    stalled.pause();
    fast = await WatchClient.watch(s.url, `/api/v1/namespaces/slow/configmaps?resourceVersion=${from}`);
    await eventually(() => s.app.get(WatchService).watcherCount === 2, { message: 'both watches open' });

    const blob = randomBytes(300 * 1024).toString('base64');
    let evicted = false;
    let written = 0;
    for (let i = 0; i < 120 && !evicted; i++) {
      await api.post('/api/v1/namespaces/slow/configmaps').send({ metadata: { name: `big-${i}` }, data: { blob } }).expect(201);
      written++;
      const e = await fast.next(5000);
      assert.equal(e.object.metadata.name, `big-${i}`, 'the reading watcher keeps up');
      evicted = s.app.get(WatchService).watcherCount === 1;
    }
    assert.ok(evicted, `the stalled watch was not closed after ${written} large events`);
    const metrics = await api.get('/metrics').expect(200);
    assert.match(metrics.text, /^plinth_watch_slow_consumers_closed_total 1$/m);
    // The stalled client, once it reads again, finds a cleanly ended stream (it would re-watch from its last revision).
    let text = '';
    stalled.setEncoding('latin1');
    stalled.on('data', (d: string) => (text += d));
    stalled.resume();
    await eventually(() => text.endsWith('0\r\n\r\n') || stalled.destroyed, { timeoutMs: 20_000, message: 'the stalled stream ends' });
    // The server stays healthy and the reading watcher still works.
    const more = await api.post('/api/v1/namespaces/slow/configmaps').send({ metadata: { name: 'after' } }).expect(201);
    assert.deepEqual(await fast.next(), { type: 'ADDED', object: more.body });
  });
});
