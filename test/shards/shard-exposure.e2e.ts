import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { anonymousIdentity, certificateIdentity, requestAs } from '../support/credentials.js';
import { eventually } from '../support/eventually.js';
import { grantClusterRole } from '../support/rbac.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { SHARDS } from './support/shards.js';

const ROLES = '/apis/rbac.authorization.k8s.io/v1/clusterroles';
const shard = (name: string, namespace: string, secret: string) => ({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Shard', metadata: { name }, spec: { secretRef: { name: secret, namespace } } });
const secretBody = (name: string, url: string) => ({ metadata: { name }, data: { url: Buffer.from(url).toString('base64') } });

// A shard that is down: its connection error (host, port, database, the driver's text) is what /readyz must not tell strangers.
describe('what shards reveal: health details and the Secrets a Shard names', { timeout: 120_000 }, () => {
  let s: TestServer;

  before(async () => {
    s = await startTestServer('shard_exposure', { PLINTH_HEALTH_PORT: '0' });
    await request(s.url).post('/api/v1/namespaces/default/secrets').send(secretBody('shard-bad', 'postgres://plinth:hunter2@127.0.0.1:1/plinthdb')).expect(201);
    await request(s.url).post(SHARDS).send(shard('bad', 'default', 'shard-bad')).expect(201);
    await eventually(async () => /\[\+\]shard-bad ok \(degraded: .*ECONNREFUSED/.test((await request(s.url).get('/readyz?verbose')).text), { timeoutMs: 30_000, message: 'the platform administrator sees the shard\'s error' });
  });
  after(async () => s?.close());

  it('/readyz?verbose: anonymous and unauthorized callers get `[+]shard-bad ok` only; system:monitoring and administrators see the error', async () => {
    const bob = await certificateIdentity('bob');
    const mon = await certificateIdentity('mon');
    await grantClusterRole(s.url, 'mon-monitoring', 'system:monitoring', [{ kind: 'User', name: 'mon' }]);
    for (const [who, id] of [['anonymous', anonymousIdentity()], ['bob', bob]] as const) {
      const res = await requestAs(s.url, id).get('/readyz?verbose').expect(200);
      assert.match(res.text, /^\[\+\]shard-bad ok$/m, who);
      assert.match(res.text, /^\[\+\]database ok$/m, who);
      assert.match(res.text, /readyz check passed$/, who);
      assert.doesNotMatch(res.text, /degraded|ECONNREFUSED|127\.0\.0\.1|plinthdb/, who);
    }
    const plain = await fetch(`${s.healthUrl}/readyz?verbose`);
    assert.equal(plain.status, 200);
    const plainText = await plain.text();
    assert.match(plainText, /^\[\+\]shard-bad ok$/m, 'the unauthenticated loopback listener');
    assert.doesNotMatch(plainText, /ECONNREFUSED|127\.0\.0\.1:1/);
    await eventually(async () => /\[\+\]shard-bad ok \(degraded: .*ECONNREFUSED/.test((await requestAs(s.url, mon).get('/readyz?verbose')).text), { message: 'system:monitoring sees the detail' });
    const livez = await requestAs(s.url, anonymousIdentity()).get('/livez?verbose').expect(200);
    assert.equal(livez.text, '[+]ping ok\nlivez check passed');
  });

  it('a Shard may name only a Secret its author may get: 403 naming the Secret otherwise, at create and at an update that changes it', async () => {
    await request(s.url).post('/api/v1/namespaces').send({ metadata: { name: 'kube-system' } }).then((r) => assert.ok(r.status === 201 || r.status === 409, r.text));
    await request(s.url).post('/api/v1/namespaces/kube-system/secrets').send(secretBody('platform-secret', 'postgres://root:topsecret@127.0.0.1:1/platform')).expect(201);
    await request(s.url).post('/api/v1/namespaces/default/secrets').send(secretBody('carols', 'postgres://carol:pw@127.0.0.1:1/carol')).expect(201);
    await request(s.url).post(ROLES).send({ metadata: { name: 'shard-maker' }, rules: [{ apiGroups: ['tenancy.plinth.dev'], resources: ['shards'], verbs: ['create', 'get', 'update'] }] }).expect(201);
    await request(s.url).post(ROLES).send({ metadata: { name: 'carols-secret' }, rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['carols'], verbs: ['get'] }] }).expect(201);
    await grantClusterRole(s.url, 'carol-shards', 'shard-maker', [{ kind: 'User', name: 'carol' }]);
    await grantClusterRole(s.url, 'carol-secret', 'carols-secret', [{ kind: 'User', name: 'carol' }]);
    const carol = requestAs(s.url, await certificateIdentity('carol'));

    const refused = await carol.post(SHARDS).send(shard('stolen', 'kube-system', 'platform-secret'));
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.kind, 'Status');
    assert.equal(refused.body.reason, 'Forbidden');
    assert.match(refused.body.message, /^shards\.tenancy\.plinth\.dev "stolen" is forbidden: User "carol" cannot get the Secret "kube-system\/platform-secret"/);
    await request(s.url).get(`${SHARDS}/stolen`).expect(404);

    const own = await carol.post(SHARDS).send(shard('carols', 'default', 'carols'));
    assert.equal(own.status, 201, own.text);
    const moved = await carol.put(`${SHARDS}/carols`).send({ ...own.body, spec: { ...own.body.spec, secretRef: { name: 'platform-secret', namespace: 'kube-system' } } });
    assert.equal(moved.status, 403, moved.text);
    assert.match(moved.body.message, /kube-system\/platform-secret/);
    const cordoned = await carol.put(`${SHARDS}/carols`).send({ ...own.body, spec: { ...own.body.spec, unschedulable: true } });
    assert.equal(cordoned.status, 200, `an update that keeps the reference is not re-checked: ${cordoned.text}`);
    // The administrator (system:masters) may name any Secret.
    await request(s.url).post(SHARDS).send(shard('admins', 'kube-system', 'platform-secret')).expect(201);
  });
});
