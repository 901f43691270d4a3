import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { makeCertificates, type TestCertificates } from '../admission/support/webhook-server.js';
import { certificateIdentity, requestAs } from '../support/credentials.js';
import { eventually } from '../support/eventually.js';
import { grantClusterRole } from '../support/rbac.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { SarWebhookServer } from './support/sar-webhook-server.js';

const dir = mkdtempSync(path.join(tmpdir(), 'plinth-authz-'));
const configFile = path.join(dir, 'authorization.yaml');

interface Hook {
  name: string;
  kubeconfig: string;
  timeout?: string;
  failurePolicy?: string;
  matchConditions?: string[];
}

/** An AuthorizationConfiguration with `hooks` before RBAC, written by rename (as an editor or a ConfigMap update does). */
function writeConfig(hooks: Hook[], rbac = true): void {
  const authorizers: unknown[] = hooks.map((h) => ({
    type: 'Webhook',
    name: h.name,
    webhook: {
      timeout: h.timeout ?? '3s',
      authorizedTTL: '5m',
      unauthorizedTTL: '30s',
      subjectAccessReviewVersion: 'v1',
      failurePolicy: h.failurePolicy ?? 'NoOpinion',
      connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: h.kubeconfig },
      ...(h.matchConditions ? { matchConditionSubjectAccessReviewVersion: 'v1', matchConditions: h.matchConditions.map((expression) => ({ expression })) } : {}),
    },
  }));
  if (rbac) authorizers.push({ type: 'RBAC', name: 'rbac' });
  const tmp = `${configFile}.tmp`;
  writeFileSync(tmp, JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AuthorizationConfiguration', authorizers }, null, 2));
  renameSync(tmp, configFile);
}

const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';

describe('structured authorization (AuthorizationConfiguration, webhooks, tenants\' webhooks)', () => {
  let s: TestServer;
  let certs: TestCertificates;
  let sar: SarWebhookServer;
  let mainKubeconfig: string;
  let slowKubeconfig: string;

  const metrics = async () => (await request(s.url).get('/metrics').expect(200)).text;
  const as = async (user: string, groups: string[] = []) => requestAs(s.url, await certificateIdentity(user, groups));

  before(async () => {
    certs = await makeCertificates();
    sar = await SarWebhookServer.start(certs);
    sar.on('/main', (r) => {
      if (r.spec.user === 'mallory') return { denied: true, reason: 'mallory is banned' };
      if (r.spec.user !== 'alice') return {};
      // Alice may list secrets only through a selector naming her team (KEP-4601), and the one secret named x.
      if (r.spec.resourceAttributes?.resource !== 'secrets') return { allowed: true, reason: 'alice may' };
      const labels = JSON.stringify(r.spec.resourceAttributes.labelSelector?.requirements ?? []);
      const fields = JSON.stringify(r.spec.resourceAttributes.fieldSelector?.requirements ?? []);
      return labels === JSON.stringify([{ key: 'team', operator: 'In', values: ['a'] }]) && fields === JSON.stringify([{ key: 'metadata.name', operator: 'In', values: ['x'] }]) ? { allowed: true } : {};
    });
    sar.on('/slow', () => 'hang');
    sar.on('/acme', (r) => (r.spec.user === 'bob' && r.spec.extra?.['authorization.plinth.dev/tenant']?.[0] === 'acme' ? { allowed: true } : {}));
    mainKubeconfig = sar.writeKubeconfig(path.join(dir, 'main.kubeconfig'), '/main', certs.caPem, 'plinth-to-main');
    slowKubeconfig = sar.writeKubeconfig(path.join(dir, 'slow.kubeconfig'), '/slow', certs.caPem);
    writeConfig([{ name: 'main', kubeconfig: mainKubeconfig, matchConditions: ["request.user != 'skip-me'"] }]);
    s = await startTestServer('structured-authz', {
      PLINTH_AUTHORIZATION_CONFIG: configFile,
      PLINTH_AUTHORIZATION_CONFIG_RELOAD_INTERVAL_SECONDS: '1',
      PLINTH_TENANTS: 'acme,other',
      PLINTH_WEBHOOK_TRUSTED_TENANTS: 'acme',
    });
  });

  after(async () => {
    await s?.close();
    await sar?.close();
  });

  it('asks the webhook with a SubjectAccessReview v1 and allows what it allows; the platform administrator never reaches it', async () => {
    const alice = await as('alice', ['developers']);
    await alice.get(CONFIGMAPS).expect(200);
    const review = sar.reviewsTo('/main').find((r) => r.spec.user === 'alice');
    assert.ok(review, 'alice was reviewed');
    assert.equal(review.apiVersion, 'authorization.k8s.io/v1');
    assert.equal(review.kind, 'SubjectAccessReview');
    assert.deepEqual(review.spec.groups, ['developers', 'system:authenticated']);
    assert.deepEqual(review.spec.resourceAttributes, { namespace: 'default', verb: 'list', version: 'v1', resource: 'configmaps' });
    assert.deepEqual(review.spec.extra?.['authorization.plinth.dev/tenant'], ['default']);
    assert.equal(review.authorization, 'Bearer plinth-to-main', 'the kubeconfig user\'s token is presented');
    const before = sar.reviews.length;
    await request(s.url).get(CONFIGMAPS).expect(200);
    assert.equal(sar.reviews.length, before, 'system:masters is allowed before any authorizer is asked');
  });

  it('answers a second identical request from the cache (authorizedTTL): the webhook is not asked again', async () => {
    const alice = await as('alice', ['developers']);
    const path = `${CONFIGMAPS}?limit=7`;
    await alice.get(path).expect(200);
    const asked = sar.reviewsTo('/main').length;
    await alice.get(path).expect(200);
    await alice.get(path).expect(200);
    assert.equal(sar.reviewsTo('/main').length, asked);
  });

  it('passes a list\'s field and label selectors in resourceAttributes (KEP-4601)', async () => {
    const alice = await as('alice', ['developers']);
    await alice.get(`${CONFIGMAPS}?labelSelector=${encodeURIComponent('team in (b,a),tier!=x,!legacy')}&fieldSelector=${encodeURIComponent('metadata.name=foo')}`).expect(200);
    const review = sar.reviewsTo('/main').at(-1)!;
    assert.deepEqual(review.spec.resourceAttributes?.fieldSelector, { requirements: [{ key: 'metadata.name', operator: 'In', values: ['foo'] }] });
    assert.deepEqual(review.spec.resourceAttributes?.labelSelector, {
      requirements: [
        { key: 'legacy', operator: 'DoesNotExist' },
        { key: 'team', operator: 'In', values: ['a', 'b'] },
        { key: 'tier', operator: 'NotIn', values: ['x'] },
      ],
    });
  });

  it('skips the webhook when a matchCondition is false (then RBAC decides)', async () => {
    const skip = await as('skip-me');
    const res = await skip.get(CONFIGMAPS).expect(403);
    assert.equal(res.body.reason, 'Forbidden');
    assert.ok(!sar.reviews.some((r) => r.spec.user === 'skip-me'), 'the webhook was not asked');
    assert.match(await metrics(), /apiserver_authorization_match_condition_exclusions_total\{type="Webhook",name="main"\} [1-9]/);
  });

  it('a denial of the webhook ends the chain, whatever RBAC would say, with the webhook\'s reason', async () => {
    await grantClusterRole(s.url, 'mallory-view', 'view', [{ kind: 'User', name: 'mallory' }]);
    const mallory = await as('mallory');
    const res = await mallory.get(CONFIGMAPS).expect(403);
    assert.match(res.body.message, /mallory is banned/);
    assert.match(await metrics(), /apiserver_authorization_decisions_total\{type="Webhook",name="main",decision="denied"\} [1-9]/);
  });

  it('admission policies\' authorizer passes fieldSelector() and labelSelector() to the chain, and waits for a webhook\'s answer', async () => {
    const ADM = '/apis/admissionregistration.k8s.io/v1';
    const check = "authorizer.group('').resource('secrets').namespace('default').fieldSelector('metadata.name=x').labelSelector('team=' + object.metadata.labels.team).check('list')";
    await request(s.url)
      .post(`${ADM}/validatingadmissionpolicies`)
      .send({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: 'team-secrets' },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }], objectSelector: { matchLabels: { policy: 'team-secrets' } } },
          validations: [{ expression: `${check}.allowed()`, messageExpression: `'may not list the team secrets: ' + ${check}.reason()` }],
        },
      })
      .expect(201);
    await request(s.url)
      .post(`${ADM}/validatingadmissionpolicybindings`)
      .send({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'team-secrets' }, spec: { policyName: 'team-secrets', validationActions: ['Deny'] } })
      .expect(201);
    const alice = await as('alice', ['developers']);
    const cm = (name: string, team: string) => ({ metadata: { name, labels: { policy: 'team-secrets', team } } });
    // Admitted at the first attempt: the check that needs the webhook is awaited and the policy evaluated again.
    const admitted = await alice.post(CONFIGMAPS).send(cm('team-a', 'a'));
    assert.equal(admitted.status, 201, JSON.stringify(admitted.body));
    const review = sar.reviewsTo('/main').find((r) => r.spec.user === 'alice' && r.spec.resourceAttributes?.resource === 'secrets');
    assert.ok(review, 'the policy\'s check reached the webhook');
    assert.deepEqual(review.spec.resourceAttributes, {
      namespace: 'default',
      verb: 'list',
      resource: 'secrets',
      fieldSelector: { requirements: [{ key: 'metadata.name', operator: 'In', values: ['x'] }] },
      labelSelector: { requirements: [{ key: 'team', operator: 'In', values: ['a'] }] },
    });
    const refused = await alice.post(CONFIGMAPS).send(cm('team-b', 'b'));
    assert.equal(refused.status, 422, JSON.stringify(refused.body));
    assert.match(refused.body.message, /may not list the team secrets/);
  });

  it('SubjectAccessReviews ask the chain: selectors (raw or as requirements) reach the webhook, a webhook\'s deny is status.denied', async () => {
    const SAR = '/apis/authorization.k8s.io/v1/subjectaccessreviews';
    const review = (user: string, resourceAttributes: Record<string, unknown>) => ({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user, resourceAttributes } });
    const secrets = { namespace: 'default', verb: 'list', resource: 'secrets' };
    const narrowed = await request(s.url)
      .post(SAR)
      .send(review('alice', { ...secrets, labelSelector: { rawSelector: 'team=a' }, fieldSelector: { requirements: [{ key: 'metadata.name', operator: 'In', values: ['x'] }] } }))
      .expect(201);
    assert.equal(narrowed.body.status.allowed, true, JSON.stringify(narrowed.body.status));
    const wide = await request(s.url).post(SAR).send(review('alice', secrets)).expect(201);
    assert.equal(wide.body.status.allowed, false);
    const banned = await request(s.url).post(SAR).send(review('mallory', secrets)).expect(201);
    assert.deepEqual(banned.body.status, { allowed: false, denied: true, reason: 'mallory is banned' });
    const both = await request(s.url)
      .post(SAR)
      .send(review('alice', { ...secrets, labelSelector: { rawSelector: 'team=a', requirements: [{ key: 'team', operator: 'In', values: ['a'] }] } }))
      .expect(422);
    assert.match(both.body.message, /spec\.resourceAttributes\.labelSelector: Invalid value: .*rawSelector and requirements may not both be specified/);
  });

  describe('a tenant\'s own webhook (TenantAuthorizationWebhook)', () => {
    const hooks = (tenant: string) => `/clusters/${tenant}/apis/authorization.plinth.dev/v1alpha1/tenantauthorizationwebhooks`;
    const body = (url: string, extra: Record<string, unknown> = {}) => ({
      apiVersion: 'authorization.plinth.dev/v1alpha1',
      kind: 'TenantAuthorizationWebhook',
      metadata: { name: 'acme-authz' },
      spec: { clientConfig: { url, caBundle: certs.caBundle }, matchConditions: [{ expression: 'has(request.resourceAttributes)' }], ...extra },
    });

    it('is defaulted and validated as a webhook authorizer; a bad CEL expression is refused naming the field', async () => {
      const bad = await request(s.url).post(hooks('acme')).send(body(sar.url('/acme'), { matchConditions: [{ expression: 'request.user ==' }] })).expect(422);
      assert.equal(bad.body.details.causes[0].field, 'spec.matchConditions[0].expression');
      assert.match(bad.body.details.causes[0].message, /compilation failed/);
      const created = await request(s.url).post(hooks('acme')).send(body(sar.url('/acme'))).expect(201);
      assert.equal(created.body.spec.failurePolicy, 'NoOpinion');
      assert.equal(created.body.spec.timeout, '10s');
      assert.equal(created.body.spec.subjectAccessReviewVersion, 'v1');
      assert.equal(created.body.spec.matchConditionSubjectAccessReviewVersion, 'v1');
    });

    it('is asked, after the platform\'s authorizers, only about requests into its own tenant', async () => {
      const bob = await as('bob');
      await bob.get(`/clusters/acme${CONFIGMAPS}`).expect(200);
      const review = sar.reviewsTo('/acme').at(-1)!;
      assert.equal(review.spec.user, 'bob');
      assert.deepEqual(review.spec.extra?.['authorization.plinth.dev/tenant'], ['acme']);
      assert.ok(sar.reviewsTo('/main').some((r) => r.spec.user === 'bob'), 'the platform\'s webhook was asked first');
      const asked = sar.reviewsTo('/acme').length;
      await bob.get(`/clusters/other${CONFIGMAPS}`).expect(403);
      await bob.get(CONFIGMAPS).expect(403);
      assert.equal(sar.reviewsTo('/acme').length, asked, 'acme\'s webhook is never asked about other tenants');
    });

    it('answers repeats from its cache, and asks every time with cacheAuthorizedRequests: false (1.34)', async () => {
      const bob = await as('bob');
      const path = `/clusters/acme${CONFIGMAPS}?limit=11`;
      await bob.get(path).expect(200);
      const cached = sar.reviewsTo('/acme').length;
      await bob.get(path).expect(200);
      assert.equal(sar.reviewsTo('/acme').length, cached, 'an allowed answer is cached by default');
      await request(s.url)
        .patch(`${hooks('acme')}/acme-authz`)
        .set('Content-Type', 'application/merge-patch+json')
        .send({ spec: { cacheAuthorizedRequests: false } })
        .expect(200);
      const before = sar.reviewsTo('/acme').length;
      await bob.get(path).expect(200);
      await bob.get(path).expect(200);
      assert.equal(sar.reviewsTo('/acme').length, before + 2, 'with the cache off, each request asks the webhook');
    });

    it('is held to the webhook egress policy: a tenant that is not trusted cannot point one at loopback', async () => {
      const res = await request(s.url).post(hooks('other')).send(body(sar.url('/acme'))).expect(422);
      assert.equal(res.body.details.causes[0].field, 'spec.clientConfig.url');
      assert.match(res.body.details.causes[0].message, /egress policy/);
    });

    it('stops being asked once deleted (the writer\'s next request sees it)', async () => {
      await request(s.url).delete(`${hooks('acme')}/acme-authz`).expect(200);
      const bob = await as('bob');
      await bob.get(`/clusters/acme${CONFIGMAPS}?limit=3`).expect(403);
    });
  });

  describe('reload of the file, and webhooks that time out', () => {
    it('a timing-out webhook with failurePolicy Deny refuses even what RBAC allows (500, as upstream, naming the timeout)', async () => {
      await grantClusterRole(s.url, 'carol-view', 'view', [{ kind: 'User', name: 'carol' }]);
      const carol = await as('carol');
      await carol.get(CONFIGMAPS).expect(200);
      writeConfig([{ name: 'slow', kubeconfig: slowKubeconfig, timeout: '1s', failurePolicy: 'Deny' }]);
      const res = await eventually(async () => {
        const r = await carol.get(CONFIGMAPS);
        return r.status === 500 && r;
      });
      assert.equal(res.body.reason, 'InternalError');
      assert.match(res.body.message, /webhook authorizer slow failed: context deadline exceeded/);
      const text = await metrics();
      assert.match(text, /apiserver_authorization_config_controller_automatic_reloads_total\{status="success",apiserver_id_hash="sha256:[0-9a-f]+"\} [1-9]/);
      const hash = createHash('sha256').update(readFileSync(configFile)).digest('hex');
      assert.match(text, new RegExp(`apiserver_authorization_config_controller_last_config_info\\{apiserver_id_hash="sha256:[0-9a-f]+",hash="sha256:${hash}"\\} 1`));
    });

    it('with failurePolicy NoOpinion the chain goes on: RBAC allows what it allows', async () => {
      writeConfig([{ name: 'slow-open', kubeconfig: slowKubeconfig, timeout: '1s', failurePolicy: 'NoOpinion' }]);
      const carol = await as('carol');
      await eventually(async () => (await carol.get(CONFIGMAPS)).status === 200);
      assert.match(await metrics(), /apiserver_authorization_webhook_evaluations_fail_open_total\{name="slow-open",result="timeout"\} [1-9]/);
    });

    it('a bad new file (a CEL expression that does not compile) keeps the chain in force and counts a failed reload', async () => {
      writeConfig([{ name: 'main', kubeconfig: mainKubeconfig, matchConditions: ['request.user =='] }]);
      await eventually(async () => /apiserver_authorization_config_controller_automatic_reloads_total\{status="failure",apiserver_id_hash="sha256:[0-9a-f]+"\} [1-9]/.test(await metrics()));
      const carol = await as('carol');
      await carol.get(CONFIGMAPS).expect(200);
      const mallory = await as('mallory');
      // The file's `main` (which bans mallory) never came into force: slow-open then RBAC still decide.
      await mallory.get(CONFIGMAPS).expect(200);
    });
  });
});
