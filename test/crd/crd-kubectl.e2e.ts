import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { kubectl, type KubectlResult, writeTestKubeconfig } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

// Compiled to dist/test/crd: the fixture stays in the source tree.
const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/gateway-api-v1.3.0-standard.yaml');

function ok(r: KubectlResult): string {
  assert.equal(r.code, 0, `kubectl failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

function fails(r: KubectlResult): string {
  assert.notEqual(r.code, 0, `kubectl unexpectedly succeeded: ${r.stdout}`);
  return r.stderr;
}

const gatewayClass = (controller: string) => `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: example
spec:
  controllerName: ${controller}
`;

const objects = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: web
  namespace: gw
spec:
  gatewayClassName: example
  listeners:
  - name: http
    protocol: HTTP
    port: 80
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: route
  namespace: gw
spec:
  parentRefs:
  - name: web
  hostnames: ["example.com"]
  rules:
  - matches:
    - path:
        type: PathPrefix
        value: /api
    backendRefs:
    - name: api-svc
      port: 8080
`;

const cronTabCrd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: crontabs, singular: crontab, kind: CronTab, shortNames: [ct]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas, labelSelectorPath: .status.labelSelector}
    additionalPrinterColumns:
    - {name: Spec, type: string, jsonPath: .spec.cronSpec}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              cronSpec: {type: string}
              replicas: {type: integer, minimum: 0}
          status:
            type: object
            properties:
              replicas: {type: integer}
              labelSelector: {type: string}
`;

describe('kubectl 1.32 with a real CRD set (Gateway API v1.3.0) and a scalable CRD', () => {
  let s: TestServer;
  let kc: string;
  const k = (args: string[], input?: string) => kubectl(kc, args, input);

  before(async () => {
    s = await startTestServer('crd-kubectl');
    kc = writeTestKubeconfig(s.url);
    ok(await k(['create', 'namespace', 'gw']));
  });
  after(async () => s.close());

  it('installs the Gateway API CRDs with kubectl apply and waits for Established', async () => {
    const out = ok(await k(['apply', '-f', FIXTURE]));
    for (const r of ['gatewayclasses', 'gateways', 'httproutes', 'grpcroutes', 'referencegrants']) {
      assert.match(out, new RegExp(`customresourcedefinition\\.apiextensions\\.k8s\\.io/${r}\\.gateway\\.networking\\.k8s\\.io created`));
    }
    ok(await k(['wait', '--for', 'condition=Established', '--timeout=20s', '-f', FIXTURE]));
    const crds = ok(await k(['get', 'crd']));
    assert.match(crds, /^NAME\s+CREATED AT\n/);
    assert.match(crds, /^httproutes\.gateway\.networking\.k8s\.io\s+\d{4}-\d\d-\d\dT/m);
    const res = ok(await k(['api-resources', '--api-group=gateway.networking.k8s.io']));
    assert.match(res, /^gatewayclasses\s+gc\s+gateway\.networking\.k8s\.io\/v1\s+false\s+GatewayClass$/m);
    assert.match(res, /^httproutes\s+gateway\.networking\.k8s\.io\/v1\s+true\s+HTTPRoute$/m);
  });

  it('creates valid objects, applies defaults and prints the CRDs\' printer columns', async () => {
    assert.equal(ok(await k(['apply', '-f', '-'], gatewayClass('example.com/gateway-controller'))).trim(), 'gatewayclass.gateway.networking.k8s.io/example created');
    ok(await k(['apply', '-f', '-'], objects));
    // Merge patches replace lists, and these lists carry server-side defaults, so kubectl says "configured" (as upstream).
    assert.match(ok(await k(['apply', '-f', '-'], objects)), /^httproute\.gateway\.networking\.k8s\.io\/route (configured|unchanged)$/m);
    assert.equal(ok(await k(['apply', '-f', '-'], gatewayClass('example.com/gateway-controller'))).trim(), 'gatewayclass.gateway.networking.k8s.io/example unchanged');
    const gc = ok(await k(['get', 'gatewayclass']));
    assert.match(gc, /^NAME\s+CONTROLLER\s+ACCEPTED\s+AGE\n/);
    assert.match(gc, /^example\s+example\.com\/gateway-controller\s+Unknown\s+\d+s$/m);
    const routes = ok(await k(['get', 'httproutes', '-n', 'gw']));
    assert.match(routes, /^NAME\s+HOSTNAMES\s+AGE\n/);
    assert.match(routes, /^route\s+\["example\.com"\]\s+\d+s$/m);
    const route = JSON.parse(ok(await k(['get', 'httproute', 'route', '-n', 'gw', '-o', 'json'])));
    assert.deepEqual(route.spec.parentRefs[0], { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'web' });
    assert.deepEqual(route.spec.rules[0].backendRefs[0], { group: '', kind: 'Service', name: 'api-svc', port: 8080, weight: 1 });
  });

  it('reports schema and CEL violations with kubectl\'s messages', async () => {
    const unknown = fails(await k(['apply', '-f', '-'], objects.replace('    port: 80', '    port: 80\n    foo: bar')));
    assert.match(unknown, /unknown field "spec\.listeners\[0\]\.foo"/);
    const enumErr = fails(await k(['apply', '-f', '-'], objects.replace('type: PathPrefix', 'type: NonExistentValue').replace('name: route', 'name: route2')));
    assert.match(enumErr, /spec\.rules\[0\]\.matches\[0\]\.path\.type: Unsupported value: "NonExistentValue": supported values: "Exact", "PathPrefix", "RegularExpression"/);
    const cel = fails(await k(['apply', '-f', '-'], objects.replace('value: /api', 'value: /a//b').replace('name: route', 'name: route3')));
    assert.match(cel, /The HTTPRoute "route3" is invalid: spec\.rules\[0\]\.matches\[0\]\.path: Invalid value: "object": must not contain '\/\/' when type one of \['Exact', 'PathPrefix'\]/);
    const required = fails(await k(['create', '-f', '-'], 'apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata:\n  name: nocontroller\nspec: {}\n'));
    assert.match(required, /spec\.controllerName: Required value/);
    const immutable = fails(await k(['apply', '-f', '-'], gatewayClass('other.example.com/controller')));
    assert.match(immutable, /spec\.controllerName: Invalid value: "string": Value is immutable/);
  });

  it('explains custom resources from the published schema', async () => {
    const spec = ok(await k(['explain', 'httproute.spec.rules.matches']));
    assert.match(spec, /^KIND:\s+HTTPRoute$/m);
    assert.match(spec, /^VERSION:\s+v1$/m);
    assert.match(spec, /Matches define conditions used for matching the rule against incoming/);
    const meta = ok(await k(['explain', 'gateways.metadata']));
    assert.match(meta, /ObjectMeta is metadata that all persisted resources must have/);
    const missing = fails(await k(['explain', 'gateway.spec.bars2']));
    assert.match(missing, /field "bars2" does not exist/);
  });

  it('scales a custom resource with kubectl scale and shows its columns', async () => {
    ok(await k(['apply', '-f', '-'], cronTabCrd));
    ok(await k(['wait', '--for', 'condition=Established', '--timeout=20s', 'crd/crontabs.stable.example.com']));
    ok(await k(['apply', '-n', 'gw', '-f', '-'], 'apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: my-cron\nspec:\n  cronSpec: "* * * * */5"\n  replicas: 1\n'));
    assert.equal(ok(await k(['scale', 'ct', 'my-cron', '-n', 'gw', '--replicas=3'])).trim(), 'crontab.stable.example.com/my-cron scaled');
    const table = ok(await k(['get', 'ct', '-n', 'gw']));
    assert.match(table, /^NAME\s+SPEC\s+REPLICAS\s+AGE\n/);
    assert.match(table, /^my-cron\s+\* \* \* \* \*\/5\s+3\s+\d+s$/m);
    assert.equal(ok(await k(['get', 'crontab', 'my-cron', '-n', 'gw', '-o', 'jsonpath={.metadata.generation}'])), '2');
    const neg = fails(await k(['scale', 'ct', 'my-cron', '-n', 'gw', '--replicas=-1']));
    assert.match(neg, /replicas|invalid/i);
  });

  it('accepts arbitrary fields under preserve-unknown schemas and explains them (checklist 28)', async () => {
    const crd = cronTabCrd
      .replace(/crontabs/g, 'blobs')
      .replace('singular: crontab, kind: CronTab, shortNames: [ct]', 'singular: blob, kind: Blob')
      .replace(/    subresources:[\s\S]*$/, '    schema:\n      openAPIV3Schema:\n        type: object\n        x-kubernetes-preserve-unknown-fields: true\n');
    ok(await k(['apply', '-f', '-'], crd));
    ok(await k(['wait', '--for', 'condition=Established', '--timeout=20s', 'crd/blobs.stable.example.com']));
    ok(await k(['apply', '-n', 'gw', '-f', '-'], 'apiVersion: stable.example.com/v1\nkind: Blob\nmetadata:\n  name: b1\nanything:\n  goes: [1, 2]\nspec:\n  free: true\n'));
    const got = JSON.parse(ok(await k(['get', 'blob', 'b1', '-n', 'gw', '-o', 'json'])));
    assert.deepEqual([got.anything, got.spec], [{ goes: [1, 2] }, { free: true }]);
    const explain = ok(await k(['explain', 'blobs']));
    assert.match(explain, /^KIND:\s+Blob$/m);
    assert.match(explain, /<empty>/);
  });

  it('lists custom resources under the categories their CRD declares, "all" included', async () => {
    ok(await k(['apply', '-f', '-'], cronTabCrd.replace('shortNames: [ct]}', 'shortNames: [ct], categories: [all, schedules]}')));
    // A fresh discovery cache: kubectl does not re-read discovery to expand a category.
    const fresh = ['--cache-dir', mkdtempSync(path.join(os.tmpdir(), 'kubectl-cache-'))];
    const all = ok(await k(['get', 'all', '-n', 'gw', '-o', 'name', ...fresh]));
    assert.match(all, /^crontab\.stable\.example\.com\/my-cron$/m);
    assert.equal(ok(await k(['get', 'schedules', '-n', 'gw', '-o', 'name', ...fresh])).trim(), 'crontab.stable.example.com/my-cron');
  });

  it('deleting a CRD with kubectl removes its instances', async () => {
    ok(await k(['delete', 'crd', 'crontabs.stable.example.com', '--timeout=20s']));
    const after = fails(await k(['get', 'ct', '-n', 'gw']));
    assert.match(after, /the server doesn't have a resource type "ct"|NotFound|could not find/);
  });
});
