import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';

const CM = '/api/v1/namespaces/default/configmaps';

/**
 * kube-apiserver retries a patch that names no resourceVersion on a
 * conflicting write (GuaranteedUpdate): writers that patch the same object
 * at once all succeed, and none of their changes is lost.
 */
describe('patches without a resourceVersion under contention', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer('patch-contention');
  });
  after(async () => s?.close());

  it('applies 24 concurrent merge patches and 24 concurrent JSON patches of one object: every one 200, every change kept', async () => {
    await request(s.url).post(CM).send({ metadata: { name: 'contended' }, data: {} }).expect(201);
    const merges = Array.from({ length: 24 }, (_, i) =>
      request(s.url).patch(`${CM}/contended`).set('Content-Type', 'application/merge-patch+json').send({ data: { [`m${i}`]: String(i) } }),
    );
    const jsons = Array.from({ length: 24 }, (_, i) =>
      request(s.url).patch(`${CM}/contended`).set('Content-Type', 'application/json-patch+json').send([{ op: 'add', path: `/metadata/labels`, value: {} }, { op: 'remove', path: '/metadata/labels' }, { op: 'add', path: `/data/j${i}`, value: String(i) }]),
    );
    const results = await Promise.all([...merges, ...jsons]);
    assert.deepEqual(
      results.filter((r) => r.status !== 200).map((r) => `${r.status} ${JSON.stringify(r.body)}`),
      [],
    );
    const data = (await request(s.url).get(`${CM}/contended`).expect(200)).body.data;
    for (let i = 0; i < 24; i++) {
      assert.equal(data[`m${i}`], String(i));
      assert.equal(data[`j${i}`], String(i));
    }
  });
});
