import { Agent, request } from 'undici';
import {
  type AdmissionAttributes,
  PolicyCache,
  ServiceResolver,
  StaticWebhookSource,
  ValidatingPolicyModule,
  ValidatingWebhookModule,
  WebhookClient,
  type WebhookConfigurationV1,
} from '@plinth/admission';
import { policyCel } from '../apps/api/src/kinds/admissionregistration/policy-cel.adapter.js';
import { allow, deny, makeCertificates, TestWebhookServer, webhookConfiguration } from '../test/admission/support/webhook-server.js';
import { percentiles, progress, runLoad, startBenchPostgres, runBenchmark, startServerProcess, stopServerAndDatabase } from './bench-support.js';

const CONCURRENCY = 32;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const LATENCY_SECONDS = Math.max(2, SECONDS / 2);
const VALUE = 'x'.repeat(256);

interface Phase {
  name: string;
  opsPerSec: number;
  p50: number;
  p99: number;
  errors: number;
}

/** The check both the policy and the webhook make: three conditions on the configmap. */
const EXPRESSIONS = [
  'object.metadata.name.size() <= 63',
  '!has(object.data) || object.data.size() <= 16',
  "!has(object.metadata.labels) || !('forbidden' in object.metadata.labels)",
];

function webhookCheck(object: { metadata?: { name?: string; labels?: Record<string, string> }; data?: Record<string, string> }): boolean {
  return (object.metadata?.name ?? '').length <= 63 && Object.keys(object.data ?? {}).length <= 16 && !('forbidden' in (object.metadata?.labels ?? {}));
}

const NAMESPACE = { metadata: { name: 'policy', labels: { p: 'yes', w: 'yes' } }, spec: {}, status: { phase: 'Active' } };

/** A configmap create as the validating phase sees it. */
function attributes(i: number): AdmissionAttributes {
  const object = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'policy', uid: `u-${i}`, creationTimestamp: '2026-01-01T00:00:00Z' }, data: { v: VALUE } };
  return {
    tenant: 'default',
    user: { username: 'bench', groups: ['system:authenticated'] },
    operation: 'CREATE',
    kind: { group: '', version: 'v1', kind: 'ConfigMap' },
    resource: { group: '', version: 'v1', resource: 'configmaps' },
    subresource: '',
    namespace: 'policy',
    name: object.metadata.name,
    object,
    oldObject: null,
    options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
    dryRun: false,
    namespaced: true,
  };
}

/** Median microseconds of `run` over `n` sequential calls (after a warm-up), in this process. */
async function medianMicros(n: number, run: (i: number) => Promise<void>): Promise<number> {
  for (let i = 0; i < 200; i++) await run(i);
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await run(i);
    samples.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  return percentiles(samples).p50;
}

/**
 * The validating phase alone, in this process, without HTTP or PostgreSQL
 * around it: the ValidatingAdmissionPolicy module with the policy of three
 * expressions, and the ValidatingAdmissionWebhook module calling the same
 * check over HTTPS on loopback. Returns median microseconds per request.
 */
async function inProcessCost(hookUrl: string, caBundle: string): Promise<{ policy: number; webhook: number }> {
  const objects = {
    validatingPolicies: [{ metadata: { name: 'bench', uid: 'b', generation: 1 }, spec: { failurePolicy: 'Fail', matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'], scope: '*' }], namespaceSelector: { matchLabels: { p: 'yes' } } }, validations: EXPRESSIONS.map((expression) => ({ expression })) } }],
    validatingBindings: [{ metadata: { name: 'bench' }, spec: { policyName: 'bench', validationActions: ['Deny'] } }],
    mutatingPolicies: [],
    mutatingBindings: [],
  };
  const namespaces = { namespaceObject: async () => NAMESPACE, namespaceLabels: async () => NAMESPACE.metadata.labels };
  const policies = new ValidatingPolicyModule({
    source: new PolicyCache(policyCel, async () => objects, () => () => undefined),
    cel: policyCel,
    params: { scopeOf: () => undefined, get: async () => undefined, list: async () => [] },
    ...namespaces,
  });
  const config = webhookConfiguration('Validating', 'bench', [{ name: 'validate.bench.plinth', url: hookUrl, caBundle, namespaceSelector: { matchLabels: { w: 'yes' } } }]) as unknown as WebhookConfigurationV1;
  const client = new WebhookClient();
  const webhooks = new ValidatingWebhookModule({ source: new StaticWebhookSource([], [config]), client, services: ServiceResolver.parse(''), namespaceLabels: namespaces.namespaceLabels });
  try {
    const policy = await medianMicros(20000, (i) => policies.validate(attributes(i), { warnings: [] }));
    const webhook = await medianMicros(2000, (i) => webhooks.validate(attributes(i), { warnings: [] }));
    return { policy, webhook };
  } finally {
    await client.close();
  }
}

/**
 * Admission policy benchmark: configmap creates through the API with no
 * policy, with one ValidatingAdmissionPolicy of three expressions, and with
 * one validating webhook (HTTPS on loopback) making the same check, in one
 * run against one server. Each configuration is selected by a namespace
 * label, so the phases differ only in what admission runs. Prints creates/s
 * and p50/p99 at 32 clients, then the per-request cost of the policy and of
 * the webhook from one client creating round-robin in the three namespaces
 * (one time window, so a shared machine's noise cancels out), and the
 * validating phase alone in this process (policy module vs webhook module),
 * which a loaded machine disturbs far less than end-to-end latencies.
 */
async function main(): Promise<void> {
  const pgPort = 57800 + (process.pid % 90);
  const apiPort = 18800 + (process.pid % 90);
  const db = await startBenchPostgres('policy', pgPort);
  progress('generating a throw-away CA and starting the HTTPS webhook server');
  const certs = await makeCertificates();
  const hooks = await TestWebhookServer.start(certs, { record: false });
  hooks.on('/validate', (req) => (webhookCheck(req.object ?? {}) ? allow() : deny('failed check')));
  const server = await startServerProcess({ DATABASE_URL: db.url, PLINTH_DB_POOL_SIZE: '32', PLINTH_WEBHOOK_TRUSTED_TENANTS: 'default', PLINTH_WEBHOOK_REFRESH_MS: '500' }, apiPort);
  const base = `http://127.0.0.1:${apiPort}`;
  const agent = new Agent({ connections: CONCURRENCY, pipelining: 1, keepAliveTimeout: 30000 });
  const call = async (method: 'POST' | 'DELETE', path: string, body?: unknown) => {
    const res = await request(`${base}${path}`, { method, body: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': 'application/json' }, dispatcher: agent });
    await res.body.arrayBuffer();
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode}`);
  };
  let seq = 0;
  const create = (ns: string) => call('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: `cm-${seq++}` }, data: { v: VALUE } });
  const phases: Phase[] = [];
  const measure = async (name: string, ns: string) => {
    progress(`${name}: warm-up`);
    await runLoad(4, 1000, () => create(ns));
    progress(`${name}: ${CONCURRENCY} clients for ${SECONDS}s`);
    const run = await runLoad(CONCURRENCY, SECONDS * 1000, () => create(ns));
    const p = percentiles(run.latencies);
    phases.push({ name, opsPerSec: run.opsPerSec, p50: p.p50, p99: p.p99, errors: run.errors });
  };
  try {
    await call('POST', '/api/v1/namespaces', { metadata: { name: 'none' } });
    await call('POST', '/api/v1/namespaces', { metadata: { name: 'policy', labels: { p: 'yes' } } });
    await call('POST', '/api/v1/namespaces', { metadata: { name: 'hook', labels: { w: 'yes' } } });
    await call('POST', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies', {
      metadata: { name: 'bench' },
      spec: {
        matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] }], namespaceSelector: { matchLabels: { p: 'yes' } } },
        validations: EXPRESSIONS.map((expression) => ({ expression })),
      },
    });
    await call('POST', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings', { metadata: { name: 'bench' }, spec: { policyName: 'bench', validationActions: ['Deny'] } });
    await call('POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', webhookConfiguration('Validating', 'bench', [
      { name: 'validate.bench.plinth', url: hooks.url('/validate'), caBundle: certs.caBundle, namespaceSelector: { matchLabels: { w: 'yes' } } },
    ]));
    await new Promise((r) => setTimeout(r, 1500));
    await measure('no policy', 'none');
    await measure('1 validating policy (3 expr)', 'policy');
    await measure('1 validating webhook', 'hook');
    progress(`per-request cost: 1 client, round-robin over the three namespaces for ${LATENCY_SECONDS * 3}s`);
    const samples: Record<string, number[]> = { none: [], policy: [], hook: [] };
    const until = Date.now() + LATENCY_SECONDS * 3000;
    for (let i = 0; Date.now() < until; i++) {
      const ns = ['none', 'policy', 'hook'][i % 3];
      const t0 = process.hrtime.bigint();
      await create(ns);
      samples[ns].push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    const solo = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, percentiles(v).p50])) as Record<string, number>;
    progress('validating phase alone, in this process');
    const inProcess = await inProcessCost(hooks.url('/validate'), certs.caBundle);
    const policyCost = solo.policy - solo.none;
    const hookCost = solo.hook - solo.none;

    console.log('\nadmission policy benchmark (this machine; the webhook over HTTPS on loopback, same machine)\n');
    console.log(`configuration                    creates/s   p50 ms   p99 ms   errors   (${CONCURRENCY} clients, ${SECONDS}s each)`);
    for (const p of phases) {
      console.log(`${p.name.padEnd(31)} ${p.opsPerSec.toFixed(0).padStart(9)}  ${p.p50.toFixed(2).padStart(7)}  ${p.p99.toFixed(2).padStart(7)}   ${p.errors}`);
    }
    console.log(`\n1-client p50 (interleaved): no policy ${solo.none.toFixed(3)} ms, policy ${solo.policy.toFixed(3)} ms, webhook ${solo.hook.toFixed(3)} ms`);
    console.log(`per-request p50 cost: policy ${policyCost.toFixed(3)} ms (target <= 0.2 ms), webhook ${hookCost.toFixed(3)} ms`);
    console.log(`webhook / policy cost: ${policyCost > 0 ? (hookCost / policyCost).toFixed(1) : 'n/a (within noise)'}x (target >= 5x)`);
    console.log(`\nvalidating phase alone (this process, median): policy ${(inProcess.policy / 1000).toFixed(3)} ms, webhook ${(inProcess.webhook / 1000).toFixed(3)} ms, ${(inProcess.webhook / inProcess.policy).toFixed(0)}x`);
  } finally {
    await agent.close();
    await hooks.close();
    await stopServerAndDatabase(server, db);
  }
}

runBenchmark(main);
