import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { certificateIdentity, type ClientIdentity, requestAs, tokenIdentity } from '../support/credentials.js';
import { grantClusterRole } from '../support/rbac.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { eventually } from '../support/eventually.js';

const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';
/** Strings that exist only inside globex's objects: no answer to an outsider may contain one. */
const SECRETS = ['globex-secret-value', 'globex-label-value', 'globex-spec-value', 'hook.globex.example.com', 'globex-robot-uid-marker'];

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
interface Probe {
  what: string;
  method: Method;
  path: string;
  body?: object;
  contentType?: string;
}

/** Every verb, subresource and metadata path a client of tenant acme could aim at globex. */
function probes(name: string): Probe[] {
  const G = '/clusters/globex';
  const cm = `${G}/api/v1/namespaces/vault/configmaps`;
  const w = `${G}/apis/globex.example.com/v1/namespaces/vault/gizmos`;
  return [
    { what: 'get', method: 'get', path: `${cm}/${name}` },
    { what: 'get as table', method: 'get', path: `${cm}/${name}?as=Table` },
    { what: 'list', method: 'get', path: cm },
    { what: 'list all namespaces', method: 'get', path: `${G}/api/v1/configmaps?labelSelector=team%3Dglobex` },
    { what: 'list page', method: 'get', path: `${cm}?limit=1` },
    { what: 'watch', method: 'get', path: `${cm}?watch=1&resourceVersion=0` },
    { what: 'create', method: 'post', path: cm, body: { metadata: { name: 'intruder' } } },
    { what: 'update', method: 'put', path: `${cm}/${name}`, body: { metadata: { name, namespace: 'vault' }, data: { a: 'b' } } },
    { what: 'merge patch', method: 'patch', path: `${cm}/${name}`, body: { data: { a: 'b' } }, contentType: 'application/merge-patch+json' },
    { what: 'apply patch', method: 'patch', path: `${cm}/${name}?fieldManager=x`, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } }, contentType: 'application/apply-patch+yaml' },
    { what: 'delete', method: 'delete', path: `${cm}/${name}` },
    { what: 'deletecollection', method: 'delete', path: cm },
    { what: 'custom resource get', method: 'get', path: `${w}/${name}` },
    { what: 'custom resource status', method: 'get', path: `${w}/${name}/status` },
    { what: 'custom resource scale', method: 'get', path: `${w}/${name}/scale` },
    { what: 'namespace get', method: 'get', path: `${G}/api/v1/namespaces/vault` },
    { what: 'namespace list', method: 'get', path: `${G}/api/v1/namespaces` },
    { what: 'serviceaccount token', method: 'post', path: `${G}/api/v1/namespaces/vault/serviceaccounts/robot/token`, body: { spec: {} } },
    { what: 'discovery /api', method: 'get', path: `${G}/api` },
    { what: 'discovery /apis', method: 'get', path: `${G}/apis` },
    { what: 'discovery group', method: 'get', path: `${G}/apis/globex.example.com/v1` },
    { what: 'openapi v2', method: 'get', path: `${G}/openapi/v2` },
    { what: 'openapi v3', method: 'get', path: `${G}/openapi/v3` },
    { what: 'crds', method: 'get', path: `${G}/apis/apiextensions.k8s.io/v1/customresourcedefinitions` },
    { what: 'webhook configurations', method: 'get', path: `${G}/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations` },
    { what: 'rbac', method: 'get', path: `${G}/apis/rbac.authorization.k8s.io/v1/clusterrolebindings` },
    { what: 'access review', method: 'post', path: `${G}/apis/authorization.k8s.io/v1/subjectaccessreviews`, body: { spec: { user: 'bob', resourceAttributes: { verb: 'get', resource: 'configmaps' } } } },
    { what: 'events', method: 'get', path: `${G}/api/v1/events` },
  ];
}

async function send(url: string, id: ClientIdentity, p: Probe): Promise<{ status: number; text: string }> {
  const as = requestAs(url, id);
  let req = as[p.method](p.path);
  if (p.body) req = req.set('Content-Type', p.contentType ?? 'application/json').send(JSON.stringify(p.body));
  const res = await req.buffer(true).parse((r, cb) => {
    let text = '';
    r.setEncoding('utf8');
    r.on('data', (c: string) => (text += c));
    r.on('end', () => cb(null, text));
  });
  return { status: res.status, text: String(res.body ?? '') };
}

// Identity × tenant × verb: an identity of tenant acme, however privileged inside acme, gets nothing from globex.
describe('tenant isolation matrix (identities of one tenant against another)', { timeout: 180_000 }, () => {
  let s: TestServer;
  const outsiders: Array<{ label: string; id: ClientIdentity; status: number }> = [];

  before(async () => {
    s = await startTestServer('isolation-matrix');
    for (const [name, owner] of [['acme', 'alice'], ['globex', 'bob']]) {
      await request(s.url)
        .post(TENANTS)
        .send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name }, spec: { owners: [{ kind: 'User', name: owner }] } })
        .expect(201);
    }
    // globex's content, written by its owner.
    const bob = requestAs(s.url, await certificateIdentity('bob'));
    const G = '/clusters/globex';
    await bob.post(`${G}/api/v1/namespaces`).send({ metadata: { name: 'vault' } }).expect(201);
    await bob.post(`${G}/api/v1/namespaces/vault/configmaps`).send({ metadata: { name: 'crown-jewels', labels: { team: 'globex', marker: 'globex-label-value' } }, data: { k: 'globex-secret-value' } }).expect(201);
    await bob.post(`${G}/api/v1/namespaces/vault/serviceaccounts`).send({ metadata: { name: 'robot', annotations: { m: 'globex-robot-uid-marker' } } }).expect(201);
    await bob
      .post(`${G}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`)
      .send({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'gizmos.globex.example.com' },
        spec: {
          group: 'globex.example.com',
          scope: 'Namespaced',
          names: { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } },
              schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { v: { type: 'string' }, replicas: { type: 'integer' } } }, status: { type: 'object', properties: { replicas: { type: 'integer' } } } } } },
            },
          ],
        },
      })
      .expect(201);
    await eventually(async () => {
      const res = await bob.post(`${G}/apis/globex.example.com/v1/namespaces/vault/gizmos`).send({ apiVersion: 'globex.example.com/v1', kind: 'Gizmo', metadata: { name: 'crown-jewels' }, spec: { v: 'globex-spec-value', replicas: 1 } });
      assert.equal(res.status, 201, `the CRD was not served: ${res.status} ${res.text}`);
    }, { timeoutMs: 5000 });
    await bob
      .post(`${G}/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations`)
      .send({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'globex' },
        webhooks: [{ name: 'hook.globex.example.com', clientConfig: { url: 'https://hooks.example.invalid/v' }, rules: [{ operations: ['CREATE'], apiGroups: ['nothing.example.com'], apiVersions: ['*'], resources: ['*'] }], sideEffects: 'None', admissionReviewVersions: ['v1'], failurePolicy: 'Ignore' }],
      })
      .expect(201);

    // acme's identities: its owner (client certificate) and a ServiceAccount made cluster-admin inside acme.
    const A = '/clusters/acme';
    outsiders.push({ label: 'acme owner (certificate)', id: await certificateIdentity('alice'), status: 403 });
    await request(s.url).post(`${A}/api/v1/namespaces/default/serviceaccounts`).send({ metadata: { name: 'ci' } }).expect(201);
    await grantClusterRole(s.url, 'ci-admin', 'cluster-admin', [{ kind: 'ServiceAccount', name: 'ci', namespace: 'default' }], A);
    const token = (await request(s.url).post(`${A}/api/v1/namespaces/default/serviceaccounts/ci/token`).send({ spec: {} }).expect(201)).body.status.token as string;
    // A ServiceAccount token is signed by acme's issuer: in globex it does not even authenticate.
    outsiders.push({ label: 'acme ServiceAccount (token)', id: tokenIdentity(token), status: 401 });
    // Sanity: both are all-powerful inside acme.
    for (const o of outsiders) await requestAs(s.url, o.id).get(`${A}/api/v1/namespaces/default/configmaps`).expect(200);
  });
  after(async () => s?.close());

  it('every verb, subresource and metadata path answers 401/403 and never a byte of the other tenant\'s data', async () => {
    const leaks: string[] = [];
    for (const o of outsiders) {
      for (const p of probes('crown-jewels')) {
        const res = await send(s.url, o.id, p);
        if (res.status !== o.status) leaks.push(`${o.label} ${p.what} ${p.method.toUpperCase()} ${p.path}: ${res.status} ${res.text.slice(0, 160)}`);
        for (const secret of SECRETS) if (res.text.includes(secret)) leaks.push(`${o.label} ${p.what}: answer contains ${secret}`);
      }
    }
    assert.deepEqual(leaks, []);
  });

  it('answers exactly alike for a name that exists in the other tenant and one that exists nowhere', async () => {
    for (const o of outsiders) {
      for (const [i, p] of probes('crown-jewels').entries()) {
        const q = probes('no-such-thing')[i];
        const existing = await send(s.url, o.id, p);
        const missing = await send(s.url, o.id, q);
        assert.equal(existing.status, missing.status, `${o.label} ${p.what}`);
        assert.equal(existing.text.replaceAll('crown-jewels', 'NAME'), missing.text.replaceAll('no-such-thing', 'NAME'), `${o.label} ${p.what}`);
      }
    }
  });

  it('the platform scope is closed to tenant owners: no Tenant list, no other tenant by name', async () => {
    const alice = requestAs(s.url, await certificateIdentity('alice'));
    await alice.get(TENANTS).expect(403);
    await alice.get(`${TENANTS}/globex`).expect(403);
    await alice.get(`${TENANTS}/no-such-tenant`).expect(403);
    await alice.get('/api/v1/namespaces').expect(403);
    // globex's owner still sees their own data: the matrix above was refused, not broken.
    const bob = requestAs(s.url, await certificateIdentity('bob'));
    const cm = await bob.get('/clusters/globex/api/v1/namespaces/vault/configmaps/crown-jewels').expect(200);
    assert.equal(cm.body.data.k, 'globex-secret-value');
  });
});
