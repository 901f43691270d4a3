import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { coreRule, VAP, VAPB, validatingBinding, validatingPolicy } from '../admission/support/policies.js';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { WatchClient, type WatchEvent } from '../watch/support/watch-client.js';
import { eventually } from '../support/eventually.js';

const NS = '/api/v1/namespaces';
const MERGE = 'application/merge-patch+json';

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

function condition(ns: { status?: { conditions?: Condition[] } }, type: string): Condition | undefined {
  return ns.status?.conditions?.find((c) => c.type === type);
}

// Upstream's namespace controller: spec.finalizers [kubernetes], the deletion conditions, finalize, kubectl waiting.
describe('namespace deletion as upstream namespace controller', { timeout: 120_000 }, () => {
  let s: TestServer;
  let kc: string;
  const api = () => request(s.url);
  const held = (ns: string, name: string, finalizer = 'example.com/hold') =>
    api().post(`${NS}/${ns}/configmaps`).send({ metadata: { name, finalizers: [finalizer] } }).expect(201);
  const release = (ns: string, name: string) =>
    api().patch(`${NS}/${ns}/configmaps/${name}`).set('Content-Type', MERGE).send(JSON.stringify({ metadata: { finalizers: null } })).expect(200);
  const gone = async (ns: string) => (await api().get(`${NS}/${ns}`)).status === 404;

  before(async () => {
    s = await startTestServer('namespace-deletion');
    kc = writeTestKubeconfig(s.url);
  });
  after(async () => s?.close());

  it('adds the kubernetes finalizer to the finalizers a client asks for on create', async () => {
    const res = await api().post(NS).send({ metadata: { name: 'own-fin' }, spec: { finalizers: ['example.com/mine'] } }).expect(201);
    assert.deepEqual(res.body.spec.finalizers, ['example.com/mine', 'kubernetes']);
  });

  it('keeps a Terminating namespace with spec.finalizers [kubernetes] and upstream conditions while content waits on a finalizer, then removes it', async () => {
    await api().post(NS).send({ metadata: { name: 'waits' } }).expect(201);
    await api().post(`${NS}/waits/configmaps`).send({ metadata: { name: 'plain' } }).expect(201);
    await held('waits', 'held');
    const del = await api().delete(`${NS}/waits`);
    assert.equal(del.body.status.phase, 'Terminating');
    assert.deepEqual(del.body.spec.finalizers, ['kubernetes']);
    let ns: { status?: { conditions?: Condition[] }; spec: { finalizers: string[] } } = del.body;
    await eventually(async () => {
      ns = (await api().get(`${NS}/waits`).expect(200)).body;
      return condition(ns, 'NamespaceFinalizersRemaining')?.status === 'True';
    }, { timeoutMs: 15_000, message: 'conditions set while the held configmap waits' });
    assert.deepEqual(ns.spec.finalizers, ['kubernetes']);
    assert.deepEqual(condition(ns, 'NamespaceContentRemaining'), {
      ...condition(ns, 'NamespaceContentRemaining'),
      status: 'True',
      reason: 'SomeResourcesRemain',
      message: 'Some resources are remaining: configmaps. has 1 resource instances',
    });
    assert.equal(condition(ns, 'NamespaceFinalizersRemaining')?.reason, 'SomeFinalizerRemain');
    assert.equal(condition(ns, 'NamespaceFinalizersRemaining')?.message, 'Some finalizers are remaining: example.com/hold in 1 resource instances');
    assert.deepEqual(
      ['NamespaceDeletionDiscoveryFailure', 'NamespaceDeletionContentFailure'].map((t) => [condition(ns, t)?.status, condition(ns, t)?.reason, condition(ns, t)?.message]),
      [
        ['False', 'ResourcesDiscovered', 'All resources successfully discovered'],
        ['False', 'ContentDeleted', 'All content successfully deleted, may be waiting on finalization'],
      ],
    );
    await api().get(`${NS}/waits/configmaps/plain`).expect(404);
    // A second DELETE answers with the namespace as it is; it stays until its content is gone.
    const again = await api().delete(`${NS}/waits`);
    assert.equal(again.body.kind, 'Namespace');
    assert.deepEqual(again.body.spec.finalizers, ['kubernetes']);

    const watch = await WatchClient.watch(s.url, `${NS}?fieldSelector=metadata.name%3Dwaits&resourceVersion=${(await api().get(`${NS}/waits`)).body.metadata.resourceVersion}`);
    try {
      await release('waits', 'held');
      let last: WatchEvent;
      do last = await watch.next(15_000);
      while (last.type !== 'DELETED');
      // The controller cleared its conditions and its finalizer (through finalize) before the namespace went.
      assert.deepEqual(last.object.spec.finalizers ?? [], []);
      assert.equal(condition(last.object, 'NamespaceContentRemaining')?.status, 'False');
      assert.equal(condition(last.object, 'NamespaceContentRemaining')?.reason, 'ContentRemoved');
      assert.equal(condition(last.object, 'NamespaceFinalizersRemaining')?.message, 'All content successfully removed');
    } finally {
      watch.close();
    }
    assert.ok(await gone('waits'));
  });

  it('takes only its own finalizer off: another spec finalizer keeps the namespace until PUT finalize clears it', async () => {
    await api().post(NS).send({ metadata: { name: 'other-fin' }, spec: { finalizers: ['example.com/mine'] } }).expect(201);
    await api().post(`${NS}/other-fin/configmaps`).send({ metadata: { name: 'c' } }).expect(201);
    await api().delete(`${NS}/other-fin`).expect((r) => assert.ok(r.status < 300));
    let ns: { spec: { finalizers: string[] }; metadata: Record<string, unknown> } | undefined;
    await eventually(async () => {
      ns = (await api().get(`${NS}/other-fin`).expect(200)).body;
      return ns!.spec.finalizers.length === 1;
    }, { timeoutMs: 15_000, message: 'kubernetes finalizer removed' });
    assert.deepEqual(ns!.spec.finalizers, ['example.com/mine']);
    await api().get(`${NS}/other-fin/configmaps/c`).expect(404);
    await api().put(`${NS}/other-fin/finalize`).send({ ...ns, spec: { finalizers: [] } }).expect(200);
    await eventually(() => gone('other-fin'), { timeoutMs: 5000, message: 'namespace removed by finalize' });
  });

  it('does not remove a Terminating namespace when a client drops a metadata finalizer while content remains', async () => {
    await api().post(NS).send({ metadata: { name: 'meta-fin', finalizers: ['example.com/meta'] } }).expect(201);
    await held('meta-fin', 'h');
    await api().delete(`${NS}/meta-fin`).expect((r) => assert.ok(r.status < 300));
    await api().patch(`${NS}/meta-fin`).set('Content-Type', MERGE).send(JSON.stringify({ metadata: { finalizers: null } })).expect(200);
    const ns = (await api().get(`${NS}/meta-fin`).expect(200)).body;
    assert.equal(ns.status.phase, 'Terminating');
    await release('meta-fin', 'h');
    await eventually(() => gone('meta-fin'), { timeoutMs: 15_000, message: 'namespace removed once empty' });
  });

  it('sets NamespaceDeletionContentFailure with the refusal when content cannot be deleted', async () => {
    await api().post(NS).send({ metadata: { name: 'refuses', labels: { guard: 'on' } } }).expect(201);
    await api().post(`${NS}/refuses/configmaps`).send({ metadata: { name: 'kept' } }).expect(201);
    await api()
      .post(VAP)
      .send(validatingPolicy('no-cm-delete', {
        matchConstraints: { resourceRules: [coreRule(['configmaps'], ['DELETE'])] },
        validations: [{ expression: 'false', message: 'configmaps here are kept' }],
      }))
      .expect(201);
    await api().post(VAPB).send(validatingBinding('no-cm-delete', 'no-cm-delete', { matchResources: { namespaceSelector: { matchLabels: { guard: 'on' } } } })).expect(201);
    await eventually(async () => (await api().delete(`${NS}/refuses/configmaps/kept`).send({ dryRun: ['All'] })).status >= 400, { timeoutMs: 10_000, message: 'policy in force' });
    await api().delete(`${NS}/refuses`).expect((r) => assert.ok(r.status < 300));
    let failure: Condition | undefined;
    await eventually(async () => {
      failure = condition((await api().get(`${NS}/refuses`).expect(200)).body, 'NamespaceDeletionContentFailure');
      return failure?.status === 'True';
    }, { timeoutMs: 15_000, message: 'content failure condition' });
    assert.equal(failure!.reason, 'ContentDeletionFailed');
    assert.match(failure!.message, /^Failed to delete all resource types, 1 remaining: .*configmaps here are kept/);
    await api().delete(`${VAPB}/no-cm-delete`).expect(200);
    await eventually(() => gone('refuses'), { timeoutMs: 20_000, message: 'namespace removed once the policy is gone' });
  });

  it('kubectl delete ns waits for the namespace to be emptied and removed', async () => {
    await api().post(NS).send({ metadata: { name: 'kd' } }).expect(201);
    for (const n of ['a', 'b', 'c']) await api().post(`${NS}/kd/configmaps`).send({ metadata: { name: n } }).expect(201);
    await api().post(`${NS}/kd/secrets`).send({ metadata: { name: 's' } }).expect(201);
    const out = await kubectl(kc, ['delete', 'ns', 'kd', '--timeout=30s']);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout.trim(), 'namespace "kd" deleted');
    // kubectl returned only once the namespace was gone.
    assert.ok(await gone('kd'));
  });

  it('kubectl wait --for=delete returns once the last finalizer in the namespace is released', async () => {
    await api().post(NS).send({ metadata: { name: 'kw' } }).expect(201);
    await held('kw', 'h');
    const del = await kubectl(kc, ['delete', 'ns', 'kw', '--wait=false']);
    assert.equal(del.code, 0, del.stderr);
    const early = await kubectl(kc, ['wait', '--for=delete', 'ns/kw', '--timeout=2s']);
    assert.notEqual(early.code, 0, 'still held by the configmap finalizer');
    const waiting = kubectl(kc, ['wait', '--for=delete', 'ns/kw', '--timeout=30s']);
    await new Promise((r) => setTimeout(r, 500));
    await release('kw', 'h');
    const out = await waiting;
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /namespace\/kw condition met/);
    assert.ok(await gone('kw'));
  });
});
