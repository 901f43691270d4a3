import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { pino } from 'pino';
import { loadConfig } from '../../apps/api/src/config/app-config.js';
import { type RunningServer, startServer } from '../../apps/api/src/app/server.js';
import { installDefaultCredentials, sharedTestDataDir } from '../support/credentials.js';
import { connectSession } from '@plinth/storage';
import { eventually } from '../support/eventually.js';
import { waitShardReady } from '../shards/support/shards.js';
import { WatchClient } from '../watch/support/watch-client.js';
import { skipStreaming, StreamingPair } from './support/streaming-standby.js';

const DB = 'plinth_sb';
const NS = 'sb';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;

/** The value of one sample of `name` with exactly these labels (0 when absent). */
async function metric(base: string, name: string, labels: string): Promise<number> {
  const text = (await request(base).get('/metrics').expect(200)).text;
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

const standbyLists = (base: string) => metric(base, 'plinth_stale_reads_total', 'verb="list",served_by="standby"');
const standbyGets = (base: string) => metric(base, 'plinth_stale_reads_total', 'verb="get",served_by="standby"');
const primaryLists = (base: string) => metric(base, 'plinth_stale_reads_total', 'verb="list",served_by="primary"');

/** Asserts a 201, saying what the server answered otherwise. */
function created(res: { status: number; text: string }): void {
  assert.equal(res.status, 201, res.text);
}

function names(body: { items: { metadata: { name: string } }[] }): string[] {
  return body.items.map((i) => i.metadata.name).filter((n) => n !== 'kube-root-ca.crt').sort();
}

describe('reads from a streaming standby (PLINTH_READ_REPLICA_URL)', { skip: skipStreaming, timeout: 120_000 }, () => {
  let pair: StreamingPair | undefined;
  let server: RunningServer | undefined;
  let base = '';

  before(async () => {
    pair = await StreamingPair.start(DB);
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: pair.url('primary', DB),
      PLINTH_READ_REPLICA_URL: pair.url('standby', DB),
      // Long enough for a standby whose replay this test pauses to still serve resourceVersion=0.
      PLINTH_READ_REPLICA_MAX_LAG_MS: '600000',
      PLINTH_DB_POOL_SIZE: '6',
      // A small window: a watch from an older revision catches up from the change log.
      PLINTH_WATCH_CACHE_SIZE: '100',
      PLINTH_DATA_DIR: sharedTestDataDir(),
    });
    server = await startServer(config, pino({ level: process.env.PLINTH_TEST_LOG ?? 'silent' }));
    installDefaultCredentials(server.pki);
    base = server.url;
    await request(base).post('/api/v1/namespaces').send({ metadata: { name: NS } }).expect(201);
    for (const name of ['a', 'b', 'c']) await request(base).post(CMS).send({ metadata: { name }, data: { v: '1' } }).expect(201);
  });
  after(async () => {
    await server?.stop().catch(() => undefined);
    await pair?.stop();
  });

  it('serves resourceVersion=0 lists and gets from the standby, and a list without resourceVersion from the primary', async () => {
    // The standby is used once its probe found it has replayed the writes (and the primary's timeline epoch).
    await eventually(async () => {
      const before = await standbyLists(base);
      const res = await request(base).get(`${CMS}?resourceVersion=0`).expect(200);
      return (await standbyLists(base)) === before + 1 && names(res.body).join() === 'a,b,c';
    }, { timeoutMs: 20_000, message: 'a resourceVersion=0 list served by the standby' });

    let s = await standbyLists(base);
    const paged = await request(base).get(`${CMS}?resourceVersion=0&limit=2`).expect(200);
    assert.equal(paged.body.items.length, 2);
    assert.equal(await standbyLists(base), s + 1, 'a resourceVersion=0 page is served by the standby');

    const g = await standbyGets(base);
    const one = await request(base).get(`${CMS}/a?resourceVersion=0`).expect(200);
    assert.equal(one.body.metadata.name, 'a');
    assert.equal(await standbyGets(base), g + 1, 'a resourceVersion=0 get is served by the standby');
    await request(base).get(`${CMS}/missing?resourceVersion=0`).expect(404);

    s = await standbyLists(base);
    const p = await primaryLists(base);
    const newest = await request(base).get(CMS).expect(200);
    assert.deepEqual(names(newest.body), ['a', 'b', 'c']);
    await request(base).get(`${CMS}/a`).expect(200);
    assert.equal(await standbyLists(base), s, 'a list without resourceVersion (the newest) is not served by the standby');
    assert.equal(await primaryLists(base), p, 'nor counted as a stale read');
  });

  it('serves a NotOlderThan read at a revision the standby lacks from the primary, with the newest data; rv=0 shows the standby\'s older state', async () => {
    await pair!.onStandby(DB, 'SELECT pg_wal_replay_pause()');
    try {
      const created = await request(base).post(CMS).send({ metadata: { name: 'd' }, data: { v: '1' } }).expect(201);
      const rv = created.body.metadata.resourceVersion as string;

      // resourceVersion=0 (Any): the paused standby answers, without d, at an older revision.
      await eventually(async () => {
        const before = await standbyLists(base);
        const res = await request(base).get(`${CMS}?resourceVersion=0`).expect(200);
        return (await standbyLists(base)) === before + 1 && names(res.body).join() === 'a,b,c' && Number(res.body.metadata.resourceVersion) < Number(rv);
      }, { timeoutMs: 10_000, message: 'the paused standby answers resourceVersion=0 with its older state' });

      // NotOlderThan the new revision: the standby lacks it, the primary answers with the newest data.
      const s = await standbyLists(base);
      const p = await primaryLists(base);
      for (const query of [`resourceVersion=${rv}`, `resourceVersion=${rv}&resourceVersionMatch=NotOlderThan`, `resourceVersion=${rv}&resourceVersionMatch=NotOlderThan&limit=10`]) {
        const res = await request(base).get(`${CMS}?${query}`).expect(200);
        assert.deepEqual(names(res.body), ['a', 'b', 'c', 'd'], query);
        assert.ok(Number(res.body.metadata.resourceVersion) >= Number(rv), query);
      }
      const got = await request(base).get(`${CMS}/d?resourceVersion=${rv}`).expect(200);
      assert.equal(got.body.metadata.resourceVersion, rv);
      assert.equal(await standbyLists(base), s, 'the standby served none of them');
      assert.equal(await primaryLists(base), p + 3, 'the primary served them');
    } finally {
      await pair!.onStandby(DB, 'SELECT pg_wal_replay_resume()');
    }
    // Replayed again: NotOlderThan the new revision goes to the standby.
    const newest = (await request(base).get(CMS).expect(200)).body.metadata.resourceVersion as string;
    await eventually(async () => {
      const before = await standbyLists(base);
      const res = await request(base).get(`${CMS}?resourceVersion=${newest}&resourceVersionMatch=NotOlderThan`).expect(200);
      return (await standbyLists(base)) === before + 1 && names(res.body).includes('d');
    }, { timeoutMs: 10_000, message: 'a NotOlderThan list served by the standby once it replayed the revision' });
  });

  it('catches a watch up from the change log on the standby, then from the live feed', async () => {
    const from = (await request(base).get(CMS).expect(200)).body.metadata.resourceVersion as string;
    for (let i = 0; i < 130; i++) await request(base).patch(`${CMS}/a`).set('content-type', 'application/merge-patch+json').send({ data: { v: String(i) } }).expect(200);
    const w0 = await metric(base, 'plinth_stale_reads_total', 'verb="watch",served_by="standby"');
    // Once the standby has replayed `from` (it is probed every second), the catch-up's first batch is read there.
    await eventually(async () => {
      const before = await metric(base, 'plinth_stale_reads_total', 'verb="watch",served_by="standby"');
      const watch = await WatchClient.watch(base, `${CMS}?watch=1&resourceVersion=${from}`);
      try {
        const events = await watch.take(130, 10_000);
        assert.deepEqual(events.map((e) => (e.object as { data: { v: string } }).data.v), Array.from({ length: 130 }, (_, i) => String(i)), 'every change after the revision, in order, once');
      } finally {
        watch.close();
      }
      return (await metric(base, 'plinth_stale_reads_total', 'verb="watch",served_by="standby"')) > before;
    }, { timeoutMs: 20_000, message: 'a watch caught up from the standby' });
    assert.ok((await metric(base, 'plinth_stale_reads_total', 'verb="watch",served_by="standby"')) > w0);
    // Live events still arrive after the catch-up.
    const watch = await WatchClient.watch(base, `${CMS}?watch=1&resourceVersion=${from}`);
    try {
      await watch.take(130, 10_000);
      await request(base).patch(`${CMS}/b`).set('content-type', 'application/merge-patch+json').send({ data: { v: 'live' } }).expect(200);
      const live = await watch.next(10_000);
      assert.equal((live.object as { metadata: { name: string } }).metadata.name, 'b');
    } finally {
      watch.close();
    }
  });

  it('reads a shard\'s tenants from the standby its Secret names (spec.secretRef.readReplicaKey)', async () => {
    const admin = await connectSession(pair!.url('primary', 'postgres'));
    await admin.query(`CREATE DATABASE ${DB}_east`);
    await admin.end();
    const b64 = (v: string) => Buffer.from(v).toString('base64');
    const data = { url: b64(pair!.url('primary', `${DB}_east`)), replica: b64(pair!.url('standby', `${DB}_east`)) };
    created(await request(base).post('/api/v1/namespaces/default/secrets').send({ metadata: { name: 'shard-east' }, data }));
    const shard = { apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Shard', metadata: { name: 'east' }, spec: { secretRef: { name: 'shard-east', namespace: 'default', readReplicaKey: 'replica' } } };
    created(await request(base).post('/apis/tenancy.plinth.dev/v1beta1/shards').send(shard));
    await waitShardReady(base, 'east');
    created(await request(base).post('/apis/tenancy.plinth.dev/v1beta1/tenants').send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'on-east' }, spec: { shard: 'east' } }));
    const path = '/clusters/on-east/api/v1/namespaces/default/configmaps';
    await eventually(async () => (await request(base).post(path).send({ metadata: { name: 'e1' } })).status === 201, { timeoutMs: 30_000, message: 'a ConfigMap created in the tenant on shard east' });
    // Served by east's standby: the platform database's standby has no rows of this tenant.
    await eventually(async () => {
      const before = await standbyLists(base);
      const res = await request(base).get(`${path}?resourceVersion=0`).expect(200);
      return (await standbyLists(base)) === before + 1 && names(res.body).join() === 'e1';
    }, { timeoutMs: 20_000, message: 'a resourceVersion=0 list of the tenant on shard east served by its standby' });
  });

  it('answers every read from the primary, without an error, once the standby stops', async () => {
    await pair!.stopServer('standby');
    const deadline = Date.now() + 4000;
    let reads = 0;
    while (Date.now() < deadline) {
      const list = await request(base).get(`${CMS}?resourceVersion=0`);
      assert.equal(list.status, 200, `list ${reads}: ${list.text}`);
      assert.deepEqual(names(list.body), ['a', 'b', 'c', 'd']);
      const unpaged = await request(base).get(`${CMS}?resourceVersion=0&limit=2`);
      assert.equal(unpaged.status, 200, unpaged.text);
      const one = await request(base).get(`${CMS}/d?resourceVersion=0`);
      assert.equal(one.status, 200, one.text);
      reads += 3;
    }
    assert.ok(reads > 10);
    const fallbacks =
      (await metric(base, 'plinth_read_replica_fallbacks_total', 'verb="list",reason="error"')) + (await metric(base, 'plinth_read_replica_fallbacks_total', 'verb="list",reason="unavailable"'));
    assert.ok(fallbacks > 0, 'the fallbacks are counted');
    assert.match((await request(base).get('/metrics')).text, /^plinth_read_replica_lag_seconds\{shard="default"\} -1$/m);
  });
});
