import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { configMap, coreRule, ensureNamespace, VAP, VAPB, validatingBinding, validatingPolicy } from '../admission/support/policies.js';
import { eventually } from '../support/eventually.js';
import { installCrd, widgetCrd } from './crd-fixtures.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const R = '/apis/example.com/v1/namespaces/semver/releases';

const releaseSchema = (versionList: Record<string, unknown>) => ({
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      'x-kubernetes-validations': [
        {
          rule: '!has(self.version) || (isSemver(self.version, true) && semver(self.version, true).isGreaterThan(semver("1.0.0")))',
          message: 'version must be a semantic version above 1.0.0',
        },
      ],
      properties: {
        version: { type: 'string', maxLength: 64 },
        strict: { type: 'string', maxLength: 64, 'x-kubernetes-validations': [{ rule: 'semver(self).major() >= 1', message: 'strict must be 1.0.0 or later' }] },
        history: versionList,
      },
    },
  },
});

describe('CEL semver library through a real server', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;

  before(async () => {
    s = await startTestServer('crd-semver');
    api = request(s.url);
    await ensureNamespace(api, 'semver');
  });
  after(async () => {
    await s?.close();
  });

  const release = (name: string, spec: Record<string, unknown>) => api.post(R).send({ apiVersion: 'example.com/v1', kind: 'Release', metadata: { name }, spec });

  it('a CRD rule using semver() refuses a bad or too old version with the rule`s message, and an unparseable one with blang`s error', async () => {
    const history = { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 32 }, 'x-kubernetes-validations': [{ rule: 'self.all(v, isSemver(v))', message: 'history holds semantic versions' }] };
    await installCrd(api, widgetCrd({ plural: 'releases', kind: 'Release', schema: releaseSchema(history) }));

    const old = await release('old', { version: '0.9.0' }).expect(422);
    assert.equal(old.body.reason, 'Invalid');
    assert.match(old.body.message, /spec: Invalid value: "object": version must be a semantic version above 1\.0\.0/);
    const junk = await release('junk', { version: 'not-a-version' }).expect(422);
    assert.match(junk.body.message, /spec: Invalid value: "object": version must be a semantic version above 1\.0\.0/);
    const strict = await release('strict', { strict: 'v2.0.0' }).expect(422);
    assert.match(strict.body.message, /spec\.strict: Invalid value: "string": Invalid character\(s\) found in major number "v2" evaluating rule: strict must be 1\.0\.0 or later/);
    const hist = await release('hist', { history: ['1.0.0', '1.1'] }).expect(422);
    assert.match(hist.body.message, /spec\.history: Invalid value: "array": history holds semantic versions/);

    // Normalized: a leading v and a missing patch are fine for `version`.
    const ok = await release('ok', { version: 'v1.2', strict: '1.35.0-rc.1+build.7', history: ['1.0.0', '1.1.0-alpha.1'] }).expect(201);
    assert.equal(ok.body.spec.version, 'v1.2');
  });

  it('estimates a semver rule`s cost at CRD creation: unbounded strings in an unbounded list are over budget', async () => {
    const unbounded = { type: 'array', items: { type: 'string' }, 'x-kubernetes-validations': [{ rule: 'self.all(v, isSemver(v))' }] };
    const res = await api.post(CRDS).send(widgetCrd({ plural: 'costlies', kind: 'Costly', schema: releaseSchema(unbounded) })).expect(422);
    assert.match(res.body.message, /x-kubernetes-validations\[0\]\.rule: Forbidden: estimated rule cost exceeds budget by factor of/);
  });

  it('a ValidatingAdmissionPolicy using isSemver() and semver comparisons denies with its messages', async () => {
    await api
      .post(VAP)
      .send(
        validatingPolicy('semver-data', {
          matchConstraints: { resourceRules: [coreRule(['configmaps'])] },
          validations: [
            { expression: "!has(object.data) || !('version' in object.data) || isSemver(object.data.version)", message: 'data.version must be a semantic version' },
            {
              expression: "!has(object.data) || !('minVersion' in object.data) || !isSemver(object.data.minVersion, true) || semver(object.data.minVersion, true).compareTo(semver('1.33.0')) >= 0",
              messageExpression: "'minVersion ' + object.data.minVersion + ' is below 1.33.0'",
            },
          ],
        }),
      )
      .expect(201);
    await api.post(VAPB).send(validatingBinding('semver-data', 'semver-data')).expect(201);

    const denied = await eventually(async () => {
      const res = await api.post('/api/v1/namespaces/semver/configmaps').send(configMap('semver', 'bad', { version: 'v1.0.0' }));
      assert.equal(res.status, 422, JSON.stringify(res.body));
      return res;
    });
    assert.equal(
      denied.body.message,
      `configmaps "bad" is forbidden: ValidatingAdmissionPolicy 'semver-data' with binding 'semver-data' denied request: data.version must be a semantic version`,
    );
    const older = await api.post('/api/v1/namespaces/semver/configmaps').send(configMap('semver', 'older', { minVersion: 'v1.32' })).expect(422);
    assert.match(older.body.message, /denied request: minVersion v1\.32 is below 1\.33\.0$/);
    await api.post('/api/v1/namespaces/semver/configmaps').send(configMap('semver', 'good', { version: '1.0.0-rc.1', minVersion: 'v1.35' })).expect(201);
  });
});
