import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { stringify } from 'yaml';
import { adminIdentity, anonymousIdentity, requestAs } from '../support/credentials.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { eventually } from '../support/eventually.js';

interface AuditEvent {
  level: string;
  auditID: string;
  stage: string;
  requestURI: string;
  verb: string;
  user: { username?: string; groups?: string[] };
  impersonatedUser?: { username: string };
  objectRef?: Record<string, string>;
  responseStatus?: { code: number; reason?: string };
  requestObject?: { data?: Record<string, string> };
  responseObject?: { metadata?: { name?: string } };
  annotations: Record<string, string>;
  sourceIPs?: string[];
}

/** GETs `path` over HTTP/2 as the administrator; resolves with the answer's Audit-Id. */
function http2Get(url: string, path: string, headers: Record<string, string> = {}): Promise<string> {
  const id = adminIdentity();
  const session = http2.connect(url, { ca: id.caPem, cert: id.certPem, key: id.keyPem });
  return new Promise((resolve, reject) => {
    session.once('error', reject);
    const req = session.request({ ':path': path, ...headers });
    req.once('response', (h) => resolve(String(h['audit-id'])));
    req.once('error', reject);
    req.resume();
    req.once('end', () => session.close());
  });
}

// Audit events in audit.k8s.io/v1 format, selected by an upstream Policy file, with the tenant and both identities.
describe('audit log', { timeout: 120_000 }, () => {
  let s: TestServer;
  let log: string;
  const events = (): AuditEvent[] => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);
  const eventsFor = (id: string, count: number): Promise<AuditEvent[]> =>
    eventually(() => {
      const found = events().filter((e) => e.auditID === id);
      return found.length >= count ? found : false;
    }, { message: `${count} audit events of ${id}` });

  before(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'plinth-audit-'));
    log = path.join(dir, 'audit.log');
    const policy = path.join(dir, 'policy.yaml');
    writeFileSync(
      policy,
      stringify({
        apiVersion: 'audit.k8s.io/v1',
        kind: 'Policy',
        rules: [
          { level: 'None', nonResourceURLs: ['/healthz*', '/readyz*', '/livez*', '/version'] },
          { level: 'RequestResponse', resources: [{ group: '', resources: ['configmaps'] }], namespaces: ['audited'], omitManagedFields: true },
          { level: 'Metadata', omitStages: ['RequestReceived'] },
        ],
      }),
    );
    s = await startTestServer('audit-log', { PLINTH_AUDIT_POLICY_FILE: policy, PLINTH_AUDIT_LOG_PATH: log, PLINTH_TENANTS: 'acme' });
    await request(s.url).post('/api/v1/namespaces').send({ metadata: { name: 'audited' } }).expect(201);
  });
  after(async () => s?.close());

  it('records RequestReceived and ResponseComplete with both bodies at RequestResponse level', async () => {
    const res = await request(s.url).post('/api/v1/namespaces/audited/configmaps').send({ metadata: { name: 'c1' }, data: { k: 'v' } }).expect(201);
    const id = res.headers['audit-id'];
    assert.match(id, /^[0-9a-f-]{36}$/);
    const [received, complete] = await eventsFor(id, 2);
    assert.equal(received.stage, 'RequestReceived');
    assert.equal(received.level, 'RequestResponse');
    assert.equal(complete.stage, 'ResponseComplete');
    assert.equal(complete.verb, 'create');
    assert.equal(complete.user.username, 'plinth-admin');
    assert.deepEqual(complete.objectRef, { resource: 'configmaps', namespace: 'audited', apiVersion: 'v1' });
    assert.equal(complete.responseStatus?.code, 201);
    assert.deepEqual(complete.requestObject?.data, { k: 'v' });
    assert.equal(complete.responseObject?.metadata?.name, 'c1');
    assert.equal((complete.responseObject?.metadata as { managedFields?: unknown }).managedFields, undefined, 'omitManagedFields');
    assert.deepEqual(complete.annotations, { 'tenancy.plinth.dev/tenant': 'default', 'authorization.k8s.io/decision': 'allow' });
    assert.deepEqual(received.sourceIPs, ['127.0.0.1']);
    assert.deepEqual(complete.sourceIPs, ['127.0.0.1']);
  });

  it('records the client\'s address, after the X-Forwarded-For chain and X-Real-Ip, as upstream does (HTTP/1.1 and HTTP/2)', async () => {
    const proxied = await request(s.url)
      .get('/api/v1/namespaces/audited/configmaps')
      .set('X-Forwarded-For', '203.0.113.7, bogus, 2001:DB8::1')
      .set('X-Real-Ip', '198.51.100.2')
      .expect(200);
    const [viaProxy] = await eventsFor(proxied.headers['audit-id'], 2);
    assert.deepEqual(viaProxy.sourceIPs, ['203.0.113.7', '2001:db8::1', '198.51.100.2', '127.0.0.1']);
    const h2 = await http2Get(s.url, '/api/v1/namespaces/audited/configmaps', { 'x-forwarded-for': '192.0.2.9' });
    const events2 = await eventsFor(h2, 2);
    assert.equal(events2.length, 2);
    for (const e of events2) assert.deepEqual(e.sourceIPs, ['192.0.2.9', '127.0.0.1'], `${e.stage} over HTTP/2`);
  });

  it('records refusals and impersonation at Metadata level, without bodies or the omitted stage, naming the tenant', async () => {
    const anon = await requestAs(s.url, anonymousIdentity()).get('/api/v1/namespaces').expect(403);
    const [a] = await eventsFor(anon.headers['audit-id'], 1);
    assert.equal(a.stage, 'ResponseComplete');
    assert.equal(a.level, 'Metadata');
    assert.equal(a.user.username, 'system:anonymous');
    assert.equal(a.responseStatus?.code, 403);
    assert.equal(a.responseStatus?.reason, 'Forbidden');
    assert.equal(a.annotations['authorization.k8s.io/decision'], 'forbid');
    assert.equal(a.requestObject, undefined);
    const imp = await request(s.url).get('/clusters/acme/api/v1/namespaces').set('Impersonate-User', 'jane').expect(403);
    const [i] = await eventsFor(imp.headers['audit-id'], 1);
    assert.equal(i.user.username, 'plinth-admin');
    assert.equal(i.impersonatedUser?.username, 'jane');
    assert.equal(i.annotations['tenancy.plinth.dev/tenant'], 'acme');
    assert.equal(i.verb, 'list');
    // ResponseComplete is the last stage of a request: once it is in the log, an omitted RequestReceived would have been too.
    assert.deepEqual(events().filter((e) => e.auditID === imp.headers['audit-id']).map((e) => e.stage), ['ResponseComplete'], 'RequestReceived is omitted by the rule');
  });

  it('carries admission policies\' auditAnnotations and Audit-action failures into the ResponseComplete event', async () => {
    await request(s.url)
      .post('/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies')
      .send({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: 'few-keys' },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }] },
          validations: [{ expression: '!has(object.data) || size(object.data) < 2', message: 'too many keys' }],
          auditAnnotations: [{ key: 'keys', valueExpression: 'string(has(object.data) ? size(object.data) : 0)' }],
        },
      })
      .expect(201);
    await request(s.url)
      .post('/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings')
      .send({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'few-keys' }, spec: { policyName: 'few-keys', validationActions: ['Audit'] } })
      .expect(201);
    const res = await request(s.url).post('/api/v1/namespaces/audited/configmaps').send({ metadata: { name: 'many' }, data: { a: '1', b: '2', c: '3' } }).expect(201);
    const done = (await eventsFor(res.headers['audit-id'], 2)).find((e) => e.stage === 'ResponseComplete')!;
    assert.equal(done.annotations['few-keys/keys'], '3');
    const failures = JSON.parse(done.annotations['validation.policy.admission.k8s.io/validation_failure']);
    assert.equal(failures[0].message, 'too many keys');
    assert.equal(failures[0].policy, 'few-keys');
  });

  it('records a watch\'s ResponseStarted and ResponseComplete, and nothing for paths the policy excludes', async () => {
    const w = await request(s.url)
      .get('/api/v1/namespaces/audited/configmaps?watch=1&timeoutSeconds=1&resourceVersion=0')
      .buffer(true)
      .parse((res, cb) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => cb(null, text));
      })
      .expect(200);
    const stages = (await eventsFor(w.headers['audit-id'], 3)).map((e) => e.stage);
    assert.deepEqual(stages, ['RequestReceived', 'ResponseStarted', 'ResponseComplete']);
    const h = await request(s.url).get('/healthz').expect(200);
    const later = await request(s.url).get('/api/v1/namespaces/audited/configmaps/c1').expect(200);
    // Events are written in the order they happen: once the later request's are in, none of the health check's can follow.
    assert.equal((await eventsFor(later.headers['audit-id'], 2)).length, 2);
    assert.deepEqual(events().filter((e) => e.auditID === h.headers['audit-id']), []);
  });
});
