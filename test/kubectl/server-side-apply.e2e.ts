import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { kubectl, type KubectlResult, writeTestKubeconfig } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { eventually } from '../support/eventually.js';

const GATEWAY_CRDS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/gateway-api-v1.3.0-standard.yaml');

function ok(r: KubectlResult): string {
  assert.equal(r.code, 0, `kubectl failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

const cm = (name: string, data: Record<string, string>) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ssa\ndata:\n${Object.entries(data).map(([k, v]) => `  ${k}: "${v}"\n`).join('')}`;

/** A CRD whose client-side apply annotation would not fit in 256 KiB of annotations (as prometheus-operator's). */
function bigCrd(): string {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < 300; i++) properties[`field${i}`] = { type: 'string', description: `Field ${i}. ${'A long description of a field. '.repeat(30)}` };
  return JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'bigs.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'bigs', singular: 'big', kind: 'Big', listKind: 'BigList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    ...properties,
                    listeners: {
                      type: 'array',
                      'x-kubernetes-list-type': 'map',
                      'x-kubernetes-list-map-keys': ['name'],
                      items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' } } },
                    },
                  },
                },
                status: { type: 'object', properties: { ready: { type: 'boolean' } } },
              },
            },
          },
        },
      ],
    },
  });
}

describe('kubectl 1.32 server-side apply against Plinth', () => {
  let s: TestServer;
  let kc: string;
  const k = (args: string[], input?: string) => kubectl(kc, args, input);

  before(async () => {
    s = await startTestServer('kubectl-ssa');
    kc = writeTestKubeconfig(s.url);
    ok(await k(['create', 'namespace', 'ssa']));
  });
  after(async () => s.close());

  it('apply --server-side creates, then reports an unchanged apply as applied again', async () => {
    assert.equal(ok(await k(['apply', '--server-side', '-f', '-'], cm('web', { color: 'blue' }))).trim(), 'configmap/web serverside-applied');
    assert.equal(ok(await k(['apply', '--server-side', '-f', '-'], cm('web', { color: 'blue' }))).trim(), 'configmap/web serverside-applied');
    const obj = JSON.parse(ok(await k(['get', 'cm', 'web', '-n', 'ssa', '-o', 'json', '--show-managed-fields'])));
    assert.deepEqual(
      obj.metadata.managedFields.map((e: { manager: string; operation: string; fieldsV1: unknown }) => [e.manager, e.operation, e.fieldsV1]),
      [['kubectl', 'Apply', { 'f:data': { 'f:color': {} } }]],
    );
    const plain = ok(await k(['get', 'cm', 'web', '-n', 'ssa', '-o', 'yaml']));
    assert.doesNotMatch(plain, /managedFields/);
  });

  it('another field manager conflicts; --force-conflicts takes the field over', async () => {
    const conflict = await k(['apply', '--server-side', '--field-manager=other', '-f', '-'], cm('web', { color: 'red' }));
    assert.equal(conflict.code, 1);
    assert.match(conflict.stderr, /Apply failed with 1 conflict: conflict with "kubectl": \.data\.color/);
    ok(await k(['apply', '--server-side', '--field-manager=other', '--force-conflicts', '-f', '-'], cm('web', { color: 'red' })));
    const obj = JSON.parse(ok(await k(['get', 'cm', 'web', '-n', 'ssa', '-o', 'json', '--show-managed-fields'])));
    assert.equal(obj.data.color, 'red');
    assert.deepEqual(obj.metadata.managedFields.map((e: { manager: string }) => e.manager), ['other']);
  });

  it('diff --server-side shows what an apply would change without changing it', async () => {
    const diff = await k(['diff', '--server-side', '--force-conflicts', '-f', '-'], cm('web', { color: 'green' }));
    assert.equal(diff.code, 1, diff.stderr);
    assert.match(diff.stdout, /-\s+color: red/);
    assert.match(diff.stdout, /\+\s+color: green/);
    assert.equal(ok(await k(['get', 'cm', 'web', '-n', 'ssa', '-o', 'jsonpath={.data.color}'])), 'red');
  });

  it('an object created by client-side apply is taken over by apply --server-side without conflicts, and back', async () => {
    assert.equal(ok(await k(['apply', '-f', '-'], cm('csa', { a: '1', b: '2' }))).trim(), 'configmap/csa created');
    assert.equal(ok(await k(['apply', '--server-side', '-f', '-'], cm('csa', { a: 'changed' }))).trim(), 'configmap/csa serverside-applied');
    const obj = JSON.parse(ok(await k(['get', 'cm', 'csa', '-n', 'ssa', '-o', 'json', '--show-managed-fields'])));
    assert.deepEqual(obj.data, { a: 'changed' });
    const kubectlEntry = obj.metadata.managedFields.find((e: { manager: string; operation: string }) => e.manager === 'kubectl' && e.operation === 'Apply');
    assert.deepEqual(kubectlEntry.fieldsV1['f:data'], { 'f:a': {} });
    assert.equal(obj.metadata.managedFields.some((e: { manager: string }) => e.manager === 'kubectl-client-side-apply'), false);
    // The last-applied annotation follows the server-side apply, so client-side apply works again afterwards.
    assert.match(obj.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'], /"a":"changed"/);
    assert.equal(ok(await k(['apply', '-f', '-'], cm('csa', { a: 'again' }))).trim(), 'configmap/csa configured');
    assert.equal(ok(await k(['get', 'cm', 'csa', '-n', 'ssa', '-o', 'jsonpath={.data.a}'])), 'again');
  });

  it('installs a CRD whose client-side apply annotation would exceed 256 KiB with --server-side, and applies its objects', async () => {
    const crd = bigCrd();
    assert.ok(crd.length > 262144, `fixture is ${crd.length} bytes`);
    const csa = await k(['apply', '-f', '-'], crd);
    assert.notEqual(csa.code, 0);
    assert.match(csa.stderr, /metadata\.annotations: Too long/);
    assert.equal(ok(await k(['apply', '--server-side', '-f', '-'], crd)).trim(), 'customresourcedefinition.apiextensions.k8s.io/bigs.example.com serverside-applied');
    await eventually(async () => (await k(['get', 'bigs', '-n', 'ssa'])).code === 0, { timeoutMs: 10000, message: 'bigs served' });
    const big = (listeners: unknown[]) => JSON.stringify({ apiVersion: 'example.com/v1', kind: 'Big', metadata: { name: 'b1', namespace: 'ssa' }, spec: { field1: 'x', listeners } });
    ok(await k(['apply', '--server-side', '-f', '-'], big([{ name: 'http', port: 80 }])));
    ok(await k(['apply', '--server-side', '--field-manager=team-b', '-f', '-'], big([{ name: 'https', port: 443 }])));
    const obj = JSON.parse(ok(await k(['get', 'big', 'b1', '-n', 'ssa', '-o', 'json', '--show-managed-fields'])));
    assert.deepEqual(obj.spec.listeners, [{ name: 'http', port: 80 }, { name: 'https', port: 443 }]);
    const teamB = obj.metadata.managedFields.find((e: { manager: string }) => e.manager === 'team-b');
    assert.deepEqual(teamB.fieldsV1, { 'f:spec': { 'f:field1': {}, 'f:listeners': { 'k:{"name":"https"}': { '.': {}, 'f:name': {}, 'f:port': {} } } } });
  });
  it('server-side apply on /status of a custom resource owns status only, recorded with its subresource', async () => {
    const api = request(s.url);
    const res = await api
      .patch('/apis/example.com/v1/namespaces/ssa/bigs/b1/status?fieldManager=big-controller')
      .set('Content-Type', 'application/apply-patch+yaml')
      .send(JSON.stringify({ apiVersion: 'example.com/v1', kind: 'Big', metadata: { name: 'b1', namespace: 'ssa' }, spec: { field2: 'ignored' }, status: { ready: true } }))
      .expect(200);
    assert.equal(res.body.status.ready, true);
    assert.equal(res.body.spec.field2, undefined);
    const entry = res.body.metadata.managedFields.find((e: { manager: string }) => e.manager === 'big-controller');
    assert.deepEqual(entry, { ...entry, operation: 'Apply', subresource: 'status', fieldsV1: { 'f:status': { 'f:ready': {} } } });
    await api
      .patch('/apis/example.com/v1/namespaces/ssa/bigs/missing/status?fieldManager=big-controller')
      .set('Content-Type', 'application/apply-patch+yaml')
      .send(JSON.stringify({ apiVersion: 'example.com/v1', kind: 'Big', metadata: { name: 'missing', namespace: 'ssa' }, status: { ready: true } }))
      .expect(404);
  });

  it('the Gateway API bundle installs with --server-side; listeners merge by name across managers and leave when unapplied', async () => {
    const out = ok(await k(['apply', '--server-side', '-f', GATEWAY_CRDS]));
    assert.match(out, /customresourcedefinition\.apiextensions\.k8s\.io\/gateways\.gateway\.networking\.k8s\.io serverside-applied/);
    await eventually(async () => (await k(['get', 'gateways', '-n', 'ssa'])).code === 0, { timeoutMs: 10000, message: 'gateways served' });
    const gw = (listeners: unknown[]) =>
      JSON.stringify({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'gw', namespace: 'ssa' }, spec: { gatewayClassName: 'c', listeners } });
    ok(await k(['apply', '--server-side', '--field-manager=platform', '-f', '-'], gw([{ name: 'http', port: 80, protocol: 'HTTP' }])));
    ok(await k(['apply', '--server-side', '--field-manager=team', '-f', '-'], gw([{ name: 'tcp', port: 9000, protocol: 'TCP' }])));
    let obj = JSON.parse(ok(await k(['get', 'gateway', 'gw', '-n', 'ssa', '-o', 'json'])));
    assert.deepEqual(obj.spec.listeners.map((l: { name: string }) => l.name), ['http', 'tcp']);
    const conflict = await k(['apply', '--server-side', '--field-manager=team', '-f', '-'], gw([{ name: 'http', port: 8080, protocol: 'HTTP' }]));
    assert.match(conflict.stderr, /conflict with "platform": \.spec\.listeners\[name="http"\]\.port/);
    ok(await k(['apply', '--server-side', '--field-manager=team', '-f', '-'], gw([])));
    obj = JSON.parse(ok(await k(['get', 'gateway', 'gw', '-n', 'ssa', '-o', 'json'])));
    assert.deepEqual(obj.spec.listeners.map((l: { name: string }) => l.name), ['http']);
  });
});
