import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { configMap, coreRule, ensureNamespace, VAP, VAPB, validatingBinding, validatingPolicy } from '../admission/support/policies.js';
import { eventually } from '../support/eventually.js';
import { installCrd, widgetCrd } from './crd-fixtures.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const R = '/apis/example.com/v1/namespaces/celeq/quotas';

const str = { type: 'string', maxLength: 64 };
const quotaSchema = (rule: string) => ({
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      'x-kubernetes-validations': [
        { rule, message: 'limit must equal request' },
        { rule: '!has(self.network) || cidr(self.network).masked() == cidr(self.network)', message: 'network must be a masked prefix' },
        { rule: '!has(self.gateway) || !has(self.network) || !(ip(self.gateway) == cidr(self.network).ip())', message: 'gateway must not be the network address' },
      ],
      properties: { limit: str, request: str, network: str, gateway: str },
    },
  },
});

describe('CEL == on Kubernetes library types through a real server', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;

  before(async () => {
    s = await startTestServer('crd-cel-equality');
    api = request(s.url);
    await ensureNamespace(api, 'celeq');
  });
  after(async () => {
    await s?.close();
  });

  const quota = (name: string, spec: Record<string, unknown>) => api.post(R).send({ apiVersion: 'example.com/v1', kind: 'Quota', metadata: { name }, spec });

  it('a CRD rule using quantity(...) == quantity(...) compares by value; CIDR and IP == as upstream', async () => {
    const rule = '!has(self.limit) || !has(self.request) || quantity(self.limit) == quantity(self.request)';
    await installCrd(api, widgetCrd({ plural: 'quotas', kind: 'Quota', schema: quotaSchema(rule) }));

    const same = await quota('same', { limit: '1Gi', request: '1024Mi', network: '10.0.0.0/8', gateway: '10.0.0.1' }).expect(201);
    assert.equal(same.body.spec.limit, '1Gi');
    await quota('milli', { limit: '1', request: '1000m' }).expect(201);

    const differ = await quota('differ', { limit: '1G', request: '1Gi' }).expect(422);
    assert.equal(differ.body.reason, 'Invalid');
    assert.match(differ.body.message, /spec: Invalid value: "object": limit must equal request/);
    const unmasked = await quota('unmasked', { network: '10.0.0.1/8' }).expect(422);
    assert.match(unmasked.body.message, /spec: Invalid value: "object": network must be a masked prefix/);
    const gateway = await quota('gateway', { network: '10.0.0.0/8', gateway: '10.0.0.0' }).expect(422);
    assert.match(gateway.body.message, /gateway must not be the network address/);
  });

  it('refuses a CRD whose rule uses != between two quantities: cel-go prices != by unknown operand sizes', async () => {
    const rule = '!has(self.limit) || !has(self.request) || quantity(self.limit) != quantity(self.request)';
    const res = await api.post(CRDS).send(widgetCrd({ plural: 'quotanes', kind: 'QuotaNe', schema: quotaSchema(rule) })).expect(422);
    assert.match(res.body.message, /x-kubernetes-validations\[0\]\.rule: Forbidden: estimated rule cost exceeds budget by factor of/);
    // A rule mixing types does not compile, as upstream.
    const mixed = await api.post(CRDS).send(widgetCrd({ plural: 'quotamixes', kind: 'QuotaMix', schema: quotaSchema("quantity('1') == ip('10.0.0.1')") })).expect(422);
    assert.match(mixed.body.message, /x-kubernetes-validations\[0\]\.rule: .*compilation failed: ERROR: <input>:1:1: no such overload: Quantity == IP/);
  });

  it('a ValidatingAdmissionPolicy comparing quantities with == and != denies with its message', async () => {
    await api
      .post(VAP)
      .send(
        validatingPolicy('celeq-data', {
          matchConstraints: { resourceRules: [coreRule(['configmaps'])] },
          validations: [
            {
              expression: "!has(object.data) || !('limit' in object.data) || !('request' in object.data) || quantity(object.data.limit) == quantity(object.data.request)",
              messageExpression: "'limit ' + object.data.limit + ' != request ' + object.data.request",
            },
            { expression: "!has(object.data) || !('cpu' in object.data) || quantity(object.data.cpu) != quantity('0')", message: 'cpu must not be zero' },
          ],
        }),
      )
      .expect(201);
    await api.post(VAPB).send(validatingBinding('celeq-data', 'celeq-data')).expect(201);

    const denied = await eventually(async () => {
      const res = await api.post('/api/v1/namespaces/celeq/configmaps').send(configMap('celeq', 'bad', { limit: '2', request: '1999m' }));
      assert.equal(res.status, 422, JSON.stringify(res.body));
      return res;
    });
    assert.equal(denied.body.message, `configmaps "bad" is forbidden: ValidatingAdmissionPolicy 'celeq-data' with binding 'celeq-data' denied request: limit 2 != request 1999m`);
    const zero = await api.post('/api/v1/namespaces/celeq/configmaps').send(configMap('celeq', 'zero', { cpu: '0m' })).expect(422);
    assert.match(zero.body.message, /denied request: cpu must not be zero$/);
    await api.post('/api/v1/namespaces/celeq/configmaps').send(configMap('celeq', 'good', { limit: '2', request: '2000m', cpu: '100m' })).expect(201);
  });
});
