import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { widgetCrd } from '../crd/crd-fixtures.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { ROOT_CA_CONFIGMAP, withoutRootCa } from '../support/root-ca.js';
import { eventually } from '../support/eventually.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
const A = '/clusters/alpha';
const B = '/clusters/bravo';
const cm = (name: string, data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { owner: data.owner ?? '' } }, data });

type Event = { type: string; object: { metadata: { name: string; resourceVersion: string }; data?: Record<string, string> } };

/** Reads a whole watch that ends after `timeoutSeconds`. */
async function watchAll(url: string): Promise<Event[]> {
  const res = await fetch(url);
  assert.equal(res.status, 200);
  const text = (await res.text()).trim();
  return text ? text.split('\n').map((l) => JSON.parse(l) as Event) : [];
}

/**
 * Tenant isolation by path (the identity dimension is in isolation-matrix):
 * nothing a request addressed to tenant alpha gets back — objects, lists,
 * counts, pages, watch events, discovery, OpenAPI, admission — is
 * influenced by what tenant bravo holds, even when bravo's own continue
 * tokens and resourceVersions are replayed against alpha.
 */
describe('tenant isolation by path', () => {
  let s: TestServer;
  const http = () => request(s.url);

  before(async () => {
    s = await startTestServer('isolation-paths');
    for (const t of ['alpha', 'bravo']) await http().post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: t } }).expect(201);
    await http().post(`${B}/api/v1/namespaces`).send({ metadata: { name: 'only-in-bravo' } }).expect(201);
    await http().post(`${B}/api/v1/namespaces/only-in-bravo/configmaps`).send(cm('b-secret', { owner: 'bravo', secret: 'hunter2' })).expect(201);
    for (const t of [A, B]) {
      const owner = t === A ? 'alpha' : 'bravo';
      await http().post(`${t}/api/v1/namespaces`).send({ metadata: { name: 'shared' } }).expect(201);
      for (const n of ['x1', 'x2', 'x3']) await http().post(`${t}/api/v1/namespaces/shared/configmaps`).send(cm(n, { owner })).expect(201);
    }
    await http().post(`${B}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`).send(widgetCrd({ group: 'bravo.example.com' })).expect(201);
    await eventually(async () => (await http().get(`${B}/apis/bravo.example.com/v1`)).status === 200, { timeoutMs: 10000, message: 'bravo CRD served' });
  });
  after(async () => s.close());

  it('gets and lists only the tenant\'s own objects, with its own counts', async () => {
    await http().get(`${A}/api/v1/namespaces/only-in-bravo/configmaps/b-secret`).expect(404);
    await http().get(`${A}/api/v1/namespaces/only-in-bravo`).expect(404);
    const all = await http().get(`${A}/api/v1/configmaps`).expect(200);
    assert.ok(all.body.items.length > 0);
    assert.ok(all.body.items.every((i: { data: Record<string, string> }) => i.data?.owner !== 'bravo'));
    // kube-root-ca.crt, x1, x2, x3: the tenant's own four.
    const page = await http().get(`${A}/api/v1/namespaces/shared/configmaps?limit=1`).expect(200);
    assert.equal(page.body.items[0].metadata.name, ROOT_CA_CONFIGMAP);
    assert.equal(page.body.metadata.remainingItemCount, 3);
    const ns = await http().get(`${A}/api/v1/namespaces`).expect(200);
    assert.ok(!ns.body.items.some((n: { metadata: { name: string } }) => n.metadata.name === 'only-in-bravo'));
  });

  it('answers the same 404 text for a name that exists in another tenant as for one that exists nowhere', async () => {
    const theirs = await http().get(`${A}/api/v1/namespaces/shared/configmaps/b-secret`).expect(404);
    const nobody = await http().get(`${A}/api/v1/namespaces/shared/configmaps/zz-secret`).expect(404);
    assert.equal(theirs.body.message.replace('b-secret', 'NAME'), nobody.body.message.replace('zz-secret', 'NAME'));
  });

  it('a continue token taken in another tenant pages through this tenant only', async () => {
    const bPage = await http().get(`${B}/api/v1/namespaces/shared/configmaps?limit=2`).expect(200);
    const token = bPage.body.metadata.continue as string;
    assert.ok(token);
    const res = await http().get(`${A}/api/v1/namespaces/shared/configmaps?limit=5&continue=${encodeURIComponent(token)}`).expect(200);
    // The token says "after shared/x1 at revision R" (bravo's kube-root-ca.crt and x1 came first): alpha's own x2 and x3 as of R, nothing of bravo.
    assert.deepEqual(res.body.items.map((i: { metadata: { name: string }; data: Record<string, string> }) => `${i.metadata.name} ${i.data.owner}`), ['x2 alpha', 'x3 alpha']);
    assert.ok(!JSON.stringify(res.body).includes('bravo'));
  });

  it('a watch from a resourceVersion of another tenant streams this tenant\'s changes only', async () => {
    const bWrite = await http().post(`${B}/api/v1/namespaces/shared/configmaps`).send(cm('after', { owner: 'bravo' })).expect(201);
    const rv = bWrite.body.metadata.resourceVersion as string;
    await http().post(`${B}/api/v1/namespaces/shared/configmaps`).send(cm('after2', { owner: 'bravo' })).expect(201);
    await http().post(`${A}/api/v1/namespaces/shared/configmaps`).send(cm('after', { owner: 'alpha' })).expect(201);
    const events = await watchAll(`${s.url}${A}/api/v1/configmaps?watch=1&resourceVersion=${rv}&timeoutSeconds=1`);
    assert.deepEqual(events.map((e) => `${e.type} ${e.object.metadata.name} ${e.object.data?.owner}`), ['ADDED after alpha']);
  });

  it('serves another tenant\'s custom resources nowhere in this tenant: paths, discovery, OpenAPI', async () => {
    await http().post(`${B}/apis/bravo.example.com/v1/namespaces/shared/widgets`).send({ apiVersion: 'bravo.example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1 } }).expect(201);
    await http().get(`${A}/apis/bravo.example.com/v1/namespaces/shared/widgets`).expect(404);
    await http().get(`${A}/apis/bravo.example.com/v1`).expect(404);
    await http().get(`${A}/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.bravo.example.com`).expect(404);
    const crds = await http().get(`${A}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`).expect(200);
    assert.equal(crds.body.items.length, 0);
    for (const path of ['/apis', '/api', '/openapi/v2', '/openapi/v3']) {
      const res = await http().get(`${A}${path}`).set('Accept', 'application/json').expect(200);
      assert.ok(!JSON.stringify(res.body).includes('bravo'), `${path} mentions bravo`);
    }
    const aggregated = await http().get(`${A}/apis`).set('Accept', 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList').expect(200);
    assert.ok(!JSON.stringify(aggregated.body).includes('bravo'));
  });

  it('another tenant\'s admission webhooks never see or stop this tenant\'s writes', async () => {
    const hook = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'bravo-deny-all' },
      webhooks: [
        {
          name: 'deny.bravo.example.com',
          clientConfig: { url: 'https://192.0.2.1:9/deny' },
          rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
          failurePolicy: 'Fail',
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          timeoutSeconds: 1,
        },
      ],
    };
    await http().post(`${B}/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations`).send(hook).expect(201);
    await eventually(async () => (await http().post(`${B}/api/v1/namespaces/shared/configmaps`).send(cm('blocked', { owner: 'bravo' }))).status >= 500, { timeoutMs: 10000, message: 'bravo webhook active' });
    await http().post(`${A}/api/v1/namespaces/shared/configmaps`).send(cm('not-blocked', { owner: 'alpha' })).expect(201);
    const hooks = await http().get(`${A}/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations`).expect(200);
    assert.equal(hooks.body.items.length, 0);
  });

  it('deletecollection in one tenant leaves the same names in another alone', async () => {
    await http().delete(`${A}/api/v1/namespaces/shared/configmaps`).expect(200);
    const left = await http().get(`${A}/api/v1/namespaces/shared/configmaps`).expect(200);
    // (The root CA publisher puts kube-root-ca.crt back.)
    assert.deepEqual(withoutRootCa(left.body.items), []);
    const theirs = await http().get(`${B}/api/v1/namespaces/shared/configmaps`).expect(200);
    assert.ok(theirs.body.items.length >= 3);
  });
});
