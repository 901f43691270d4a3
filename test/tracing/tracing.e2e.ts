import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { allow, makeCertificates, patch, type TestCertificates, TestWebhookServer, webhookConfiguration } from '../admission/support/webhook-server.js';
import { eventually } from '../support/eventually.js';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { WatchClient } from '../watch/support/watch-client.js';

const MWC = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const REFRESH_MS = 100;
/** Spans leave in batches (every 5 s, as upstream's exporter): the wait for them is the test's patience, not a timing. */
const EXPORTED = { timeoutMs: 30_000, intervalMs: 100 };

/** A TracingConfiguration file with `body` (YAML), in a folder of its own. */
function tracingFile(body: string): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'plinth-tracing-')), 'tracing.yaml');
  writeFileSync(file, `apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\n${body}`);
  return file;
}

/** The one span of `spans` named `name` (fails naming what there is otherwise). */
function only(spans: ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.filter((s) => s.name === name);
  assert.equal(found.length, 1, `spans named ${JSON.stringify(name)} among ${JSON.stringify(spans.map((s) => s.name))}`);
  return found[0];
}

/** A sampled W3C traceparent of a made-up caller: its trace and span ids, and the header. */
function callerContext(): { traceId: string; spanId: string; header: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, header: `00-${traceId}-${spanId}-01` };
}

/**
 * A watch of `path` that is live: opened as a streaming list (sendInitialEvents) and read up to its
 * initial-events-end BOOKMARK, after which the server has subscribed it to the cache's live dispatch. Opening
 * answers with the headers before that: a write landing in between reaches the watch as catch-up (a window
 * read, WatchCache.since), which is not cacher.dispatchEvent (as upstream), so it has no fan-out span.
 */
async function liveWatch(base: string, path: string): Promise<WatchClient> {
  const watch = await WatchClient.open(base, `${path}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`);
  try {
    for (;;) {
      const e = await watch.next(30_000);
      if (e.type === 'BOOKMARK' && e.object?.metadata?.annotations?.['k8s.io/initial-events-end'] === 'true') return watch;
    }
  } catch (err) {
    watch.close();
    throw err;
  }
}

/** Reads `watch` up to the change of the object named `name`, which must be `type` (other objects' changes, e.g. kube-root-ca.crt's, are passed over). */
async function expectChange(watch: WatchClient, type: string, name: string): Promise<void> {
  for (;;) {
    const e = await watch.nextChange(30_000);
    if (e.object?.metadata?.name !== name) continue;
    assert.equal(e.type, type, `the change of ${name}`);
    return;
  }
}

describe('OpenTelemetry traces (PLINTH_TRACING_CONFIG_FILE)', () => {
  let certs: TestCertificates;
  let hooks: TestWebhookServer;

  before(async () => {
    certs = await makeCertificates(['webhook.plinth-test.svc']);
    hooks = await TestWebhookServer.start(certs);
  });
  after(async () => {
    await hooks?.close();
  });

  describe('sampling every request (samplingRatePerMillion: 1000000)', () => {
    let receiver: OtlpReceiver;
    let s: TestServer;
    let api: ReturnType<typeof request>;

    before(async () => {
      receiver = await OtlpReceiver.start();
      s = await startTestServer('tracing-all', {
        PLINTH_TRACING_CONFIG_FILE: tracingFile(`endpoint: ${receiver.endpoint}\nsamplingRatePerMillion: 1000000\n`),
        // The webhook server listens on loopback: the documented local-development exemption.
        PLINTH_WEBHOOK_TRUSTED_TENANTS: 'default',
        PLINTH_WEBHOOK_REFRESH_MS: String(REFRESH_MS),
      });
      api = request(s.url);
    });
    after(async () => {
      await s?.close();
      await receiver?.close();
    });

    it('exports the span tree of a create with a mutating webhook: request → Authenticate, Authorize, admission steps → webhook call (traceparent sent), storage, watch fan-out; each with tenant and shard', async () => {
      await api.post('/api/v1/namespaces').send({ metadata: { name: 'traced', labels: { test: 'traced' } } }).expect(201);
      hooks.on('/label', () => patch([{ op: 'add', path: '/metadata/labels', value: { traced: 'yes' } }]));
      await api
        .post(MWC)
        .send(
          webhookConfiguration('Mutating', 'label-cm', [
            { name: 'label.traced.test', url: hooks.url('/label'), caBundle: certs.caBundle, namespaceSelector: { matchLabels: { test: 'traced' } } },
          ]),
        )
        .expect(201);
      await new Promise((r) => setTimeout(r, REFRESH_MS * 2 + 100));
      const watch = await liveWatch(s.url, '/api/v1/namespaces/traced/configmaps');
      let res;
      try {
        res = await api.post('/api/v1/namespaces/traced/configmaps').send({ metadata: { name: 'one' }, data: { a: '1' } }).expect(201);
        assert.equal(res.body.metadata.labels.traced, 'yes');
        // The watch is closed only once it has seen the write: the fan-out is of a change handed to a live watcher.
        await expectChange(watch, 'ADDED', 'one');
      } finally {
        watch.close();
      }
      const root = await eventually(
        () => {
          // The trace of the create of `one`: its storage span names the object.
          const created = receiver.spans.find((x) => x.name === 'storage.create' && x.attributes.name === 'one');
          return (created && receiver.spans.find((x) => x.traceId === created.traceId && x.name === 'POST /api/v1/namespaces/{:namespace}/configmaps' && x.attributes['http.response.status_code'] === 201)) ?? false;
        },
        { ...EXPORTED, message: 'the create request span' },
      );
      assert.equal(root.kind, 'SPAN_KIND_SERVER');
      assert.equal(root.parentSpanId, '');
      assert.equal(root.attributes['http.request.method'], 'POST');
      assert.equal(root.attributes['url.path'], '/api/v1/namespaces/traced/configmaps');
      assert.equal(root.resource['service.name'], 'apiserver');
      // The fan-out follows the commit (and may leave in a later batch): wait for it too.
      const spans = await eventually(() => (receiver.trace(root.traceId).some((x) => x.name === 'cacher.dispatchEvent') ? receiver.trace(root.traceId) : false), {
        ...EXPORTED,
        message: 'the fan-out span in the create’s trace',
      });

      const childOf = (parent: ReceivedSpan, name: string) => {
        const span = only(spans, name);
        assert.equal(span.parentSpanId, parent.spanId, `${name} is a child of ${parent.name}`);
        return span;
      };
      assert.equal(childOf(root, 'Authenticate').attributes.result, 'success');
      assert.equal(childOf(root, 'Authorize').attributes.decision, 'allowed');
      // The webhook's patch has the mutating plugins run again (reinvocation): the webhook is called in the first run only.
      const call = only(spans, 'Call mutating webhook');
      const mutating = spans.find((x) => x.spanId === call.parentSpanId);
      assert.equal(mutating?.name, 'Admit MutatingAdmissionWebhook');
      assert.equal(mutating.parentSpanId, root.spanId);
      assert.equal(mutating.attributes.plugin, 'MutatingAdmissionWebhook');
      assert.equal(mutating.attributes.operation, 'CREATE');
      assert.equal(spans.filter((x) => x.name === 'Admit MutatingAdmissionWebhook' && x.parentSpanId === root.spanId).length, 2);
      childOf(root, 'Validate ValidatingAdmissionWebhook');
      assert.equal(call.kind, 'SPAN_KIND_CLIENT');
      assert.equal(call.attributes.webhook, 'label.traced.test');
      assert.equal(call.attributes.configuration, 'label-cm');
      assert.equal(call.attributes.resource, '/v1, Resource=configmaps');
      assert.equal(call.attributes.operation, 'CREATE');
      const calls = hooks.callsTo('/label').filter((c) => (c.request.object as { metadata?: { name?: string } } | undefined)?.metadata?.name === 'one');
      assert.equal(calls.length, 1);
      assert.equal(call.attributes.UID, calls[0].request.uid);
      // The webhook got the call's own context: same trace, the call span as parent, sampled.
      assert.equal(calls[0].headers.traceparent, `00-${root.traceId}-${call.spanId}-01`);
      const create = childOf(root, 'storage.create');
      assert.equal(create.kind, 'SPAN_KIND_CLIENT');
      assert.equal(create.attributes['db.system.name'], 'postgresql');
      assert.equal(create.attributes.resource, 'configmaps');
      assert.equal(create.attributes.namespace, 'traced');
      assert.equal(create.attributes.name, 'one');
      assert.equal(create.attributes.revision, Number(res.body.metadata.resourceVersion));
      // The watch fan-out hangs under the write's storage span: the trace shows the write reaching its watcher.
      const fanOut = childOf(create, 'cacher.dispatchEvent');
      assert.equal(fanOut.attributes.revision, Number(res.body.metadata.resourceVersion));
      for (const span of spans) {
        assert.equal(span.attributes.tenant, 'default', `${span.name} carries the tenant`);
        assert.equal(span.attributes.shard, 'default', `${span.name} carries the shard`);
      }
    });

    it('exports the watch fan-out of every write a live watch sees (cacher.dispatchEvent) with its tenant, shard, type, revision and watchers', async () => {
      const watch = await liveWatch(s.url, '/api/v1/namespaces/traced/configmaps');
      try {
        for (let i = 0; i < 5; i++) {
          const res = await api.post('/api/v1/namespaces/traced/configmaps').send({ metadata: { name: `fan-${i}` }, data: { a: '1' } }).expect(201);
          await expectChange(watch, 'ADDED', `fan-${i}`);
          const span = await eventually(
            () => receiver.spans.find((x) => x.name === 'cacher.dispatchEvent' && x.attributes.resource === 'configmaps' && x.attributes.name === `fan-${i}`) ?? false,
            { ...EXPORTED, message: `the fan-out of fan-${i}` },
          );
          assert.equal(span.attributes.type, 'ADDED');
          assert.equal(span.attributes.revision, Number(res.body.metadata.resourceVersion));
          assert.equal(span.attributes.watchers, 1);
          assert.equal(span.attributes.tenant, 'default');
          assert.equal(span.attributes.shard, 'default');
        }
      } finally {
        watch.close();
      }
    });

    it('continues the trace of an incoming sampled traceparent: the request span is the caller span’s child', async () => {
      const caller = callerContext();
      await api.get('/api/v1/namespaces/traced/configmaps/one').set('traceparent', caller.header).expect(200);
      const span = await eventually(() => receiver.trace(caller.traceId).find((x) => x.name === 'GET /api/v1/namespaces/{:namespace}/configmaps/{:name}') ?? false, {
        ...EXPORTED,
        message: 'the request span in the caller’s trace',
      });
      assert.equal(span.parentSpanId, caller.spanId);
      assert.equal(span.attributes['http.response.status_code'], 200);
      assert.ok(receiver.trace(caller.traceId).some((x) => x.name === 'storage.get' && x.parentSpanId === span.spanId));
    });

    it('carries the tenant of a request under /clusters/{tenant} on its spans', async () => {
      const caller = callerContext();
      await api.get('/clusters/default/api/v1/namespaces/traced/configmaps').set('traceparent', caller.header).expect(200);
      const spans = await eventually(() => (receiver.trace(caller.traceId).some((x) => x.name === 'storage.list') ? receiver.trace(caller.traceId) : false), EXPORTED);
      const root = only(spans, 'GET /clusters/{:tenant}/api/v1/namespaces/{:namespace}/configmaps');
      assert.equal(root.attributes.tenant, 'default');
      assert.equal(only(spans, 'storage.list').attributes.shard, 'default');
    });
  });

  describe('sampling none (samplingRatePerMillion: 0)', () => {
    let receiver: OtlpReceiver;
    let s: TestServer;
    let api: ReturnType<typeof request>;

    before(async () => {
      receiver = await OtlpReceiver.start();
      s = await startTestServer('tracing-none', { PLINTH_TRACING_CONFIG_FILE: tracingFile(`endpoint: ${receiver.endpoint}\nsamplingRatePerMillion: 0\n`) });
      api = request(s.url);
    });
    after(async () => {
      await s?.close();
      await receiver?.close();
    });

    it('sends no span of requests without a sampled parent, and still continues a sampled traceparent', async () => {
      await api.post('/api/v1/namespaces').send({ metadata: { name: 'quiet' } }).expect(201);
      await api.post('/api/v1/namespaces/quiet/configmaps').send({ metadata: { name: 'one' } }).expect(201);
      await api.get('/api/v1/namespaces/quiet/configmaps').expect(200);
      // An unsampled incoming context is honoured too: not sampled.
      const unsampled = callerContext();
      await api.get('/api/v1/namespaces/quiet/configmaps').set('traceparent', `00-${unsampled.traceId}-${unsampled.spanId}-00`).expect(200);
      // The sampled request comes last: once its spans arrived, whatever the earlier requests sent has too (spans leave in order).
      const caller = callerContext();
      await api.get('/api/v1/namespaces/quiet/configmaps/one').set('traceparent', caller.header).expect(200);
      await eventually(() => receiver.trace(caller.traceId).some((x) => x.name === 'storage.get'), { ...EXPORTED, message: 'the sampled request’s spans' });
      const others = receiver.spans.filter((x) => x.traceId !== caller.traceId);
      assert.deepEqual(
        others.map((x) => x.name),
        [],
      );
    });
  });
});
