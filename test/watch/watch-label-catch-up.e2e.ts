import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import request from 'supertest';
import { ChangeLogRepository } from '@plinth/storage';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { WatchClient } from './support/watch-client.js';

type Labels = Record<string, string> | undefined;

/** One write of the scenario and what a watcher of `app=web` must see of it (upstream: entering is ADDED, leaving DELETED). */
interface Step {
  ns: string;
  name: string;
  rv: number;
  prev: Labels | null;
  next: Labels | null;
}

function expectedFor(steps: Step[], matches: (l: Labels) => boolean, ns: string | null = 'lab'): Array<[string, string, number]> {
  const out: Array<[string, string, number]> = [];
  for (const s of steps) {
    if (ns !== null && s.ns !== ns) continue;
    const was = s.prev !== null && matches(s.prev);
    const is = s.next !== null && matches(s.next);
    if (is && was) out.push(['MODIFIED', s.name, s.rv]);
    else if (is) out.push(['ADDED', s.name, s.rv]);
    else if (was) out.push(['DELETED', s.name, s.rv]);
  }
  return out;
}

// A small watch cache window (100 changes) so that the resumes below read the change log.
describe('watch: a label-selected watch resumed from far back (the change log label index)', { timeout: 120_000 }, () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;
  const steps: Step[] = [];
  const labelsOf = new Map<string, Labels>();
  let from = 0;
  const open: WatchClient[] = [];

  const write = async (ns: string, name: string, labels: Labels | null, data: Record<string, string> = {}) => {
    const prev = labelsOf.has(`${ns}/${name}`) ? labelsOf.get(`${ns}/${name}`) : null;
    let res;
    if (labels === null) res = await api.delete(`/api/v1/namespaces/${ns}/configmaps/${name}`);
    else if (prev === null) res = await api.post(`/api/v1/namespaces/${ns}/configmaps`).send({ metadata: { name, labels }, data });
    else res = await api.put(`/api/v1/namespaces/${ns}/configmaps/${name}`).send({ metadata: { name, labels }, data });
    assert.ok(res.status < 300, `${name}: ${res.status} ${res.text}`);
    if (labels === null) labelsOf.delete(`${ns}/${name}`);
    else labelsOf.set(`${ns}/${name}`, labels);
    steps.push({ ns, name, rv: 0, prev, next: labels });
  };

  const collect = async (path: string, n: number) => {
    const w = await WatchClient.watch(s.url, path);
    open.push(w);
    assert.equal(w.status, 200);
    const events = n === 0 ? [] : await w.take(n, 20_000);
    // Nothing more arrives: the catch-up sent exactly these.
    assert.deepEqual((await w.drainFor(500)).filter((e) => e.type !== 'BOOKMARK'), []);
    return events.map((e) => [e.type, e.object.metadata.name, Number(e.object.metadata.resourceVersion)]);
  };

  before(async () => {
    s = await startTestServer('watch_labels', { PLINTH_WATCH_CACHE_SIZE: '100', PLINTH_WATCH_POLL_INTERVAL_MS: '200' });
    api = request(s.url);
    for (const ns of ['lab', 'other']) await api.post('/api/v1/namespaces').send({ metadata: { name: ns } }).expect(201);
    from = Number((await api.get('/api/v1/namespaces/lab/configmaps').expect(200)).body.metadata.resourceVersion);
    await write('lab', 'a', { app: 'web', tier: 'fe' });
    await write('lab', 'b', { app: 'db' });
    await write('other', 'x', { app: 'web' });
    await write('lab', 'b', { app: 'web' }); // enters the selection
    await write('lab', 'a', { app: 'db', tier: 'fe' }); // leaves it
    await write('lab', 'a', { app: 'db', tier: 'fe' }, { v: '1' }); // outside, unseen
    await write('lab', 'b', { app: 'web' }, { v: '1' }); // inside, MODIFIED
    await write('lab', 'c', undefined);
    await write('lab', 'c', { app: 'web' }); // labels added: enters
    await write('lab', 'b', null); // deleted while selected
    await write('lab', 'a', { app: 'web', tier: 'be' }); // back in
    // Unlabelled churn pushes all of it out of the watch cache's window.
    for (let i = 0; i < 220; i++) await write(i % 2 ? 'lab' : 'other', `churn-${i % 10}`, undefined, { i: String(i) });
    await write('lab', 'c', null);
    // Each write made one change, in order: their revisions, from the log (a delete answers with a Status, not the object).
    const log = await s.app.get(ChangeLogRepository).changesInScope(from, 10_000, { tenant: 'default', resource: 'configmaps' });
    const mine = log.events.filter((e) => e.key.name !== 'kube-root-ca.crt');
    assert.equal(mine.length, steps.length);
    mine.forEach((e, i) => {
      assert.equal(`${e.key.namespace}/${e.key.name}`, `${steps[i].ns}/${steps[i].name}`);
      steps[i].rv = e.revision;
    });
  });
  after(async () => {
    for (const w of open) w.close();
    await s.close();
  });

  it('sends exactly the matching changes in order, entering as ADDED and leaving as DELETED, read through the label index', async () => {
    const want = expectedFor(steps, (l) => l?.app === 'web');
    assert.ok(want.length >= 7, 'the scenario exercises every transition');
    assert.deepEqual(await collect(`/api/v1/namespaces/lab/configmaps?resourceVersion=${from}&labelSelector=app%3Dweb`, want.length), want);
    // The log's read of that scope used the index and left out the changes neither of whose states was app=web.
    const read = await s.app.get(ChangeLogRepository).changesInScope(from, 500, { tenant: 'default', resource: 'configmaps', namespace: 'lab' }, [{ key: 'app', operator: 'Equals', values: ['web'] }]);
    assert.equal(read.indexed, true);
    assert.deepEqual(read.events.map((e) => e.revision), want.map((w) => w[2]));
  });

  it('narrows by every equality term and across namespaces alike, and serves selectors without equality terms from the whole scope', async () => {
    const both = expectedFor(steps, (l) => l?.app === 'web' && l?.tier === 'be');
    assert.equal(both.length, 1);
    assert.deepEqual(await collect(`/api/v1/namespaces/lab/configmaps?resourceVersion=${from}&labelSelector=app%3Dweb,tier%20in%20(be)`, both.length), both);
    const tiered = expectedFor(steps, (l) => l?.tier !== undefined);
    assert.deepEqual(await collect(`/api/v1/namespaces/lab/configmaps?resourceVersion=${from}&labelSelector=tier`, tiered.length), tiered);
    const web = expectedFor(steps, (l) => l?.app === 'web', null);
    assert.ok(web.some((e) => e[1] === 'x'), 'another namespace has an app=web object');
    assert.deepEqual(await collect(`/api/v1/configmaps?resourceVersion=${from}&labelSelector=app%3Dweb`, web.length), web);
  });

  it('reads the log as before when the catch-up starts below the first indexed change (history written before migration 0018)', async () => {
    const client = new pg.Client({ connectionString: s.database.url });
    await client.connect();
    try {
      await client.query('UPDATE change_label_index SET from_revision = $1', [from + 5]);
      const read = await s.app.get(ChangeLogRepository).changesInScope(from, 500, { tenant: 'default', resource: 'configmaps', namespace: 'lab' }, [{ key: 'app', operator: 'Equals', values: ['web'] }]);
      assert.equal(read.indexed, false);
      assert.equal(read.events.filter((e) => e.key.name !== 'kube-root-ca.crt').length, steps.filter((x) => x.ns === 'lab').length, 'every change of the scope');
      const want = expectedFor(steps, (l) => l?.app === 'web');
      assert.deepEqual(await collect(`/api/v1/namespaces/lab/configmaps?resourceVersion=${from}&labelSelector=app%3Dweb`, want.length), want);
    } finally {
      await client.query('UPDATE change_label_index SET from_revision = 1');
      await client.end();
    }
  });
});
