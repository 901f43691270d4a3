import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type AuditAttributes, AuditPolicy, AuditPolicyError } from './audit-policy.js';

const attrs = (over: Partial<AuditAttributes>): AuditAttributes => ({
  user: 'u',
  groups: ['system:authenticated'],
  verb: 'get',
  resourceRequest: true,
  apiGroup: '',
  resource: 'configmaps',
  subresource: '',
  namespace: 'ns',
  name: 'x',
  path: '/api/v1/namespaces/ns/configmaps/x',
  ...over,
});

describe('AuditPolicy', () => {
  const policy = AuditPolicy.fromObject({
    apiVersion: 'audit.k8s.io/v1',
    kind: 'Policy',
    omitStages: ['RequestReceived'],
    rules: [
      { level: 'None', users: ['system:kube-proxy'] },
      { level: 'None', nonResourceURLs: ['/healthz*', '/version'] },
      { level: 'RequestResponse', resources: [{ group: 'rbac.authorization.k8s.io', resources: ['*'] }] },
      { level: 'Request', resources: [{ group: '', resources: ['secrets', 'pods/log'] }], verbs: ['create', 'get'] },
      { level: 'Metadata', userGroups: ['devs'], omitStages: ['ResponseStarted'] },
      { level: 'Metadata', namespaces: ['kube-system'] },
    ],
  });

  it('takes the first rule that matches: users, groups, verbs, resources with subresources, namespaces, non-resource URLs', () => {
    assert.equal(policy.decide(attrs({ user: 'system:kube-proxy' })).level, 'None');
    assert.equal(policy.decide(attrs({ resourceRequest: false, path: '/healthz/etcd' })).level, 'None');
    assert.equal(policy.decide(attrs({ resourceRequest: false, path: '/api' })).level, 'None', 'no rule matches');
    assert.equal(policy.decide(attrs({ apiGroup: 'rbac.authorization.k8s.io', resource: 'roles' })).level, 'RequestResponse');
    assert.equal(policy.decide(attrs({ resource: 'secrets', verb: 'create' })).level, 'Request');
    assert.equal(policy.decide(attrs({ resource: 'secrets', verb: 'delete' })).level, 'None');
    assert.equal(policy.decide(attrs({ resource: 'pods', subresource: 'log' })).level, 'Request');
    const devs = policy.decide(attrs({ groups: ['devs'] }));
    assert.equal(devs.level, 'Metadata');
    assert.deepEqual([...devs.omitStages].sort(), ['RequestReceived', 'ResponseStarted']);
    assert.equal(policy.decide(attrs({ namespace: 'kube-system' })).level, 'Metadata');
  });

  it('refuses policies upstream refuses, naming the field', () => {
    assert.throws(() => AuditPolicy.fromObject({ apiVersion: 'v1', kind: 'Policy', rules: [] }), AuditPolicyError);
    assert.throws(() => AuditPolicy.fromObject({ apiVersion: 'audit.k8s.io/v1', kind: 'Policy', rules: [{ level: 'Loud' }] }), /rules\[0\]\.level/);
    assert.throws(() => AuditPolicy.fromObject({ apiVersion: 'audit.k8s.io/v1', kind: 'Policy', rules: [{ level: 'None', nonResourceURLs: ['/x'], namespaces: ['a'] }] }), /both regular resources and non-resource URLs/);
    assert.throws(() => AuditPolicy.fromObject({ apiVersion: 'audit.k8s.io/v1', kind: 'Policy', rules: [{ level: 'None', omitStages: ['Later'] }] }), /unknown stage "Later"/);
  });
});
