import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { eventually } from '../support/eventually.js';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { startTestServerOn, type TestServer } from '../support/test-server.js';
import {
  aesgcmConfig,
  b64,
  configFile,
  createSecrets,
  dumpTables,
  KEY1,
  KEY2,
  metricSum,
  rotationState,
  secretValuesNotUnder,
  waitRotated,
} from './rotation-support.js';

const WRITERS = 16;
/** Secrets each writer updates in turn. */
const PER_WRITER = 3;
/** Secrets nobody writes during the rotation: their resourceVersion must not move. */
const STILL = 150;

interface Writer {
  /** The last value acknowledged (2xx) for each of its Secrets. */
  acked: Map<string, string>;
  writes: number;
  failures: string[];
}

/**
 * One writer: patches its Secrets in turn with a new value until `stop()`
 * says so. Each patch first tests (JSON patch `test`) that the Secret still
 * holds the value last acknowledged for it, so a write lost in between (laid
 * over by an older body) fails the next one.
 */
async function write(url: string, w: number, stop: () => boolean, acked: () => void): Promise<Writer> {
  const state: Writer = { acked: new Map(), writes: 0, failures: [] };
  for (let i = 0; i < PER_WRITER; i++) state.acked.set(`w${w}-${i}`, `w${w}-${i}-v0`);
  for (let n = 1; !stop(); n++) {
    const name = `w${w}-${n % PER_WRITER}`;
    const value = `w${w}-${n % PER_WRITER}-v${n}`;
    const res = await request(url)
      .patch(`/api/v1/namespaces/busy/secrets/${name}`)
      .set('Content-Type', 'application/json-patch+json')
      .send([
        { op: 'test', path: '/data/v', value: b64(state.acked.get(name)!) },
        { op: 'replace', path: '/data/v', value: b64(value) },
      ]);
    if (res.status === 200) {
      state.acked.set(name, value);
      state.writes++;
      acked();
    } else {
      state.failures.push(`${name}: ${res.status} ${res.text}`);
    }
  }
  return state;
}

describe('encryption rotation: a new first key, then the rotation job, under 16 writers', () => {
  let tdb: TestDatabase;
  let s: TestServer;
  const config = configFile(aesgcmConfig([['key1', KEY1]]));
  const env = (extra: Record<string, string> = {}) => ({
    PLINTH_ENCRYPTION_PROVIDER_CONFIG: config.file,
    PLINTH_ENCRYPTION_PROVIDER_CONFIG_AUTOMATIC_RELOAD: 'true',
    PLINTH_ENCRYPTION_PROVIDER_CONFIG_RELOAD_INTERVAL_SECONDS: '1',
    ...extra,
  });

  before(async () => {
    tdb = await createTestDatabase('encryption-rotation');
    // A rate limit keeps the pass running for a while, so that the writers overlap it.
    s = await startTestServerOn(tdb, env({ PLINTH_ENCRYPTION_ROTATION_ROWS_PER_SECOND: '150' }));
    for (const ns of ['busy', 'still']) await request(s.url).post('/api/v1/namespaces').send({ metadata: { name: ns } }).expect(201);
    for (let w = 0; w < WRITERS; w++) await createSecrets(s.url, 'busy', `w${w}`, PER_WRITER);
    await createSecrets(s.url, 'still', 'still', STILL);
  });
  after(async () => {
    await s?.close();
    await tdb?.drop();
  });

  it('re-encrypts every object and change-log row with the new key, loses no acknowledged write, and the old key can then go', async () => {
    assert.deepEqual(await secretValuesNotUnder(tdb.url, 'k8s:enc:aesgcm:v1:key1:'), [], 'before: everything is under key1');
    const stillBefore = (await request(s.url).get('/api/v1/namespaces/still/secrets').expect(200)).body;
    const listRv = stillBefore.metadata.resourceVersion as string;
    const rvs = new Map<string, string>(stillBefore.items.map((i: { metadata: { name: string; resourceVersion: string } }) => [i.metadata.name, i.metadata.resourceVersion]));

    let stopping = false;
    let acks = 0;
    const writers = Array.from({ length: WRITERS }, (_, w) => write(s.url, w, () => stopping, () => acks++));
    // Upstream's steps 1 and 2 (key2 added, then first), then the job does step 3 by itself.
    const hash = config.write(aesgcmConfig([['key2', KEY2], ['key1', KEY1]]));
    try {
      await eventually(async () => {
        const state = await rotationState(tdb.url);
        return state?.target === hash && state.phase !== 'done' ? state : false;
      }, { timeoutMs: 60_000, intervalMs: 100, message: 'the rotation to key2 has begun' });
    } catch (err) {
      stopping = true;
      await Promise.all(writers);
      throw err;
    }
    const acksWhenBegun = acks;
    let acksWhenDone: number;
    try {
      await waitRotated(s.url, tdb.url, hash);
    } finally {
      acksWhenDone = acks;
      stopping = true;
    }
    const done = await Promise.all(writers);

    assert.deepEqual(done.flatMap((w) => w.failures), [], 'every write during the rotation succeeded');
    assert.ok(done.every((w) => w.writes > 0), 'every writer wrote');
    assert.ok(acksWhenDone > acksWhenBegun, `writes were acknowledged while the pass ran (${acksWhenBegun} then ${acksWhenDone})`);
    const state = await rotationState(tdb.url);
    assert.ok(state && state.rewritten >= STILL, `the job rewrote the Secrets nobody wrote (${state?.rewritten})`);
    assert.equal(state?.failed, 0);
    assert.ok((await metricSum(s.url, 'plinth_encryption_rotation_rows_total', 'result="rewritten"')) >= STILL);

    // PostgreSQL, read directly: every object and every change-log copy is under key2, and no value is in plain.
    assert.deepEqual(await secretValuesNotUnder(tdb.url, 'k8s:enc:aesgcm:v1:key2:'), []);
    const text = await dumpTables(tdb.url);
    for (const w of done) for (const v of w.acked.values()) assert.equal(text.includes(v) || text.includes(b64(v)), false, `${v} found in plain`);
    assert.equal(text.includes(b64('still-0-v0')), false);

    // No acknowledged write lost: each Secret holds the last value acknowledged.
    for (const w of done) {
      for (const [name, value] of w.acked) {
        const got = (await request(s.url).get(`/api/v1/namespaces/busy/secrets/${name}`).expect(200)).body;
        assert.equal(got.data.v, b64(value), `${name} holds its last acknowledged value`);
      }
    }
    // Re-encryption in place: the untouched Secrets kept their resourceVersion, and no watcher saw an event.
    const stillAfter = (await request(s.url).get('/api/v1/namespaces/still/secrets').expect(200)).body;
    for (const i of stillAfter.items) assert.equal(i.metadata.resourceVersion, rvs.get(i.metadata.name), `${i.metadata.name} kept its resourceVersion`);
    const watched = await kubectl(writeTestKubeconfig(s.url), ['get', '--raw', `/api/v1/namespaces/still/secrets?watch=1&resourceVersion=${listRv}&timeoutSeconds=1`]);
    assert.equal(watched.code, 0, watched.stderr);
    assert.equal(watched.stdout.trim(), '', 'no watch event for a re-encryption');

    // Upstream's step 4: remove key1 (and identity), restart: nothing is lost, the history included.
    const firstRv = stillBefore.items[0].metadata.resourceVersion as string;
    await s.close();
    const finalHash = config.write(aesgcmConfig([['key2', KEY2]], false));
    s = await startTestServerOn(tdb, env());
    const kc = writeTestKubeconfig(s.url);
    const all = await kubectl(kc, ['get', 'secrets', '-A', '-o', 'json']);
    assert.equal(all.code, 0, all.stderr);
    const items = (JSON.parse(all.stdout) as { items: Array<{ metadata: { namespace: string; name: string }; data: { v?: string } }> }).items;
    assert.equal(items.filter((i) => i.metadata.namespace === 'still').length, STILL);
    for (const w of done) for (const [name, value] of w.acked) assert.equal(items.find((i) => i.metadata.namespace === 'busy' && i.metadata.name === name)?.data.v, b64(value));
    const history = await kubectl(kc, ['get', '--raw', `/api/v1/namespaces/busy/secrets?watch=1&resourceVersion=${firstRv}&timeoutSeconds=1`]);
    assert.equal(history.code, 0, history.stderr);
    const events = history.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string });
    assert.ok(events.length > WRITERS, 'the kept history replays');
    assert.deepEqual(events.filter((e) => e.type === 'ERROR'), [], 'every change of the kept history decrypts with key2 alone');
    await waitRotated(s.url, tdb.url, finalHash);
    assert.equal((await rotationState(tdb.url))?.rewritten, 0, 'nothing was left for the pass after key1 went');

    // After restarts, the operator asks for another pass with an annotation on the Shard.
    const passed = await rotationState(tdb.url);
    const annotated = await kubectl(kc, ['annotate', 'shard', 'default', 'encryption.plinth.dev/rotate=after-restarts']);
    assert.equal(annotated.code, 0, annotated.stderr);
    await eventually(async () => {
      const st = await rotationState(tdb.url);
      return st?.requested === 'after-restarts' && st.phase === 'done' && st.started_at.getTime() > passed!.started_at.getTime();
    }, { timeoutMs: 60_000, intervalMs: 200, message: 'the annotation asked for another pass, and it ran' });
  });
});
