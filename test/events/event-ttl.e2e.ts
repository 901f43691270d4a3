import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import request from 'supertest';
import { createDatabase } from '@plinth/storage';
import { loadConfig, ConfigError } from '../../apps/api/src/config/app-config.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { eventually } from '../support/eventually.js';
import { WatchClient } from '../watch/support/watch-client.js';

/** The TTL of this test: short, so that Events expire within it. */
const TTL = '3s';
const TTL_MS = 3000;

function coreEvent(name: string, ns: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name },
    involvedObject: { apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'cm' },
    reason: 'Looked',
    message: 'looked at it',
    type: 'Normal',
    count: 1,
  };
}

function newEvent(name: string): Record<string, unknown> {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name },
    eventTime: '2026-12-02T05:00:00.000000Z',
    reportingController: 'example.com/ttl',
    reportingInstance: 'ttl-1',
    action: 'Checked',
    reason: 'Looked',
    type: 'Normal',
    regarding: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ttl', name: 'cm' },
    note: 'looked at it',
  };
}

describe('PLINTH_EVENT_TTL', { timeout: 120_000 }, () => {
  let s: TestServer;
  const api = () => request(s.url);
  const db = () => createDatabase({ connectionString: s.database.url, maxConnections: 1 });

  /**
   * The tenant's usage of Events (key `events`: other objects, such as Leases, change size meanwhile) and
   * its objects of every kind (key '').
   */
  async function usage(tenant: string): Promise<{ objects: number; bytes: number; allObjects: number }> {
    const d = db();
    try {
      const { rows } = await sql<{ usage_key: string; objects: string; bytes: string }>`SELECT usage_key, objects, bytes FROM tenant_usage WHERE tenant = ${tenant} AND usage_key IN ('', 'events')`.execute(d);
      const ev = rows.find((r) => r.usage_key === 'events');
      return { objects: Number(ev?.objects ?? 0), bytes: Number(ev?.bytes ?? 0), allObjects: Number(rows.find((r) => r.usage_key === '')?.objects) };
    } finally {
      await d.destroy();
    }
  }

  before(async () => {
    s = await startTestServer('event-ttl', { PLINTH_EVENT_TTL: TTL, PLINTH_TENANTS: 'acme' });
    await api().post('/api/v1/namespaces').send({ metadata: { name: 'ttl' } }).expect(201);
    await api().post('/clusters/acme/api/v1/namespaces').send({ metadata: { name: 'ttl' } }).expect(201);
  });
  after(async () => s?.close());

  it('is a positive Go duration, 1h by default', () => {
    assert.equal(loadConfig({}).eventTtlMs, 3600_000);
    assert.equal(loadConfig({ PLINTH_EVENT_TTL: '1h30m' }).eventTtlMs, 5400_000);
    assert.equal(loadConfig({ PLINTH_EVENT_TTL: '1500ms' }).eventTtlMs, 1500);
    for (const bad of ['1', '1d', 'soon', '0', '-5m']) {
      assert.throws(() => loadConfig({ PLINTH_EVENT_TTL: bad }), (e: unknown) => e instanceof ConfigError && e.message.includes(`PLINTH_EVENT_TTL=${JSON.stringify(bad)}: PLINTH_EVENT_TTL must be a Go duration`), bad);
    }
  });

  it('removes Events of every tenant once not written for the TTL, their bytes leaving the usage; watchers see DELETED; an Event written meanwhile stays', async () => {
    const before = { default: await usage('default'), acme: await usage('acme') };
    const watch = await WatchClient.watch(s.url, '/api/v1/namespaces/ttl/events');
    const watchNew = await WatchClient.watch(s.url, '/clusters/acme/apis/events.k8s.io/v1/namespaces/ttl/events');
    try {
      const firstWrite = Date.now();
      for (let i = 0; i < 5; i++) await api().post('/api/v1/namespaces/ttl/events').send(coreEvent(`core-${i}`, 'ttl')).expect(201);
      await api().post('/apis/events.k8s.io/v1/namespaces/ttl/events').send(newEvent('new-0')).expect(201);
      for (let i = 0; i < 3; i++) await api().post('/clusters/acme/apis/events.k8s.io/v1/namespaces/ttl/events').send(newEvent(`acme-${i}`)).expect(201);
      const grown = await usage('default');
      assert.equal(grown.objects, before.default.objects + 6);
      assert.ok(grown.bytes > before.default.bytes);
      // Written again every 400 ms: never expired while that goes on.
      await api().post('/api/v1/namespaces/ttl/events').send(coreEvent('kept', 'ttl')).expect(201);
      let beats = 0;
      const heart = setInterval(() => {
        beats++;
        void api()
          .patch('/api/v1/namespaces/ttl/events/kept')
          .set('Content-Type', 'application/merge-patch+json')
          .send({ count: (beats % 9) + 1 })
          .then(() => undefined, () => undefined);
      }, 400);
      try {
        await eventually(async () => {
          const list = await api().get('/api/v1/namespaces/ttl/events').expect(200);
          assert.deepEqual(list.body.items.map((e: { metadata: { name: string } }) => e.metadata.name), ['kept']);
          const acme = await api().get('/clusters/acme/apis/events.k8s.io/v1/namespaces/ttl/events').expect(200);
          assert.equal(acme.body.items.length, 0);
        }, { timeoutMs: 20_000 });
        // Not before the TTL.
        assert.ok(Date.now() - firstWrite >= TTL_MS, `gone after ${Date.now() - firstWrite} ms`);
        await new Promise((r) => setTimeout(r, TTL_MS));
        await api().get('/api/v1/namespaces/ttl/events/kept').expect(200);
      } finally {
        clearInterval(heart);
      }
      const deleted = watch.events.filter((e) => e.type === 'DELETED').map((e) => (e.object as { metadata: { name: string } }).metadata.name).sort();
      assert.deepEqual(deleted, ['core-0', 'core-1', 'core-2', 'core-3', 'core-4', 'new-0']);
      const deletedNew = watchNew.events.filter((e) => e.type === 'DELETED').map((e) => (e.object as { metadata: { name: string } }).metadata.name).sort();
      assert.deepEqual(deletedNew, ['acme-0', 'acme-1', 'acme-2']);
      assert.deepEqual(await usage('acme'), before.acme, 'acme usage back to where it was');
      // Once no longer written, the kept Event goes too, and the usage is exactly what it was before any Event.
      await eventually(async () => {
        await api().get('/api/v1/namespaces/ttl/events/kept').expect(404);
      }, { timeoutMs: 20_000 });
      assert.deepEqual(await usage('default'), before.default);
    } finally {
      watch.close();
      watchNew.close();
    }
  });
});
