import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AuthorizationAttributes } from '@plinth/apimachinery';
import { compactRules, covers, describeMissing } from './policy-covers.js';
import { compactString, type PolicyRule, ruleAllows, toPolicyRule } from './policy-rule.js';

const rule = (p: Partial<PolicyRule>): PolicyRule => toPolicyRule(p);
const res = (verb: string, resource: string, extra: Partial<AuthorizationAttributes> = {}): AuthorizationAttributes => ({
  user: { username: 'u', groups: [] },
  tenant: 't',
  verb,
  resourceRequest: true,
  apiGroup: '',
  apiVersion: 'v1',
  resource,
  subresource: '',
  namespace: 'ns',
  name: '',
  path: '',
  ...extra,
});
const path = (verb: string, p: string): AuthorizationAttributes => ({ ...res(verb, ''), resourceRequest: false, path: p });

describe('ruleAllows (upstream RuleAllows)', () => {
  it('matches each verb exactly, and * matches every verb', () => {
    for (const verb of ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection', 'escalate', 'bind', 'impersonate']) {
      assert.equal(ruleAllows(res(verb, 'configmaps'), rule({ apiGroups: [''], resources: ['configmaps'], verbs: [verb] })), true, verb);
      assert.equal(ruleAllows(res(verb, 'configmaps'), rule({ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] })), true, verb);
      const other = verb === 'get' ? 'list' : 'get';
      assert.equal(ruleAllows(res(verb, 'configmaps'), rule({ apiGroups: [''], resources: ['configmaps'], verbs: [other] })), false, verb);
    }
  });

  it('matches groups, * groups and * resources', () => {
    const r = rule({ apiGroups: ['apps'], resources: ['deployments'], verbs: ['get'] });
    assert.equal(ruleAllows(res('get', 'deployments', { apiGroup: 'apps' }), r), true);
    assert.equal(ruleAllows(res('get', 'deployments', { apiGroup: 'extensions' }), r), false);
    assert.equal(ruleAllows(res('get', 'anything', { apiGroup: 'x' }), rule({ apiGroups: ['*'], resources: ['*'], verbs: ['get'] })), true);
  });

  it('subresources need resource/sub, */sub or *; a resource rule does not cover its subresources', () => {
    const a = res('get', 'namespaces', { subresource: 'status' });
    assert.equal(ruleAllows(a, rule({ apiGroups: [''], resources: ['namespaces'], verbs: ['get'] })), false);
    assert.equal(ruleAllows(a, rule({ apiGroups: [''], resources: ['namespaces/status'], verbs: ['get'] })), true);
    assert.equal(ruleAllows(a, rule({ apiGroups: [''], resources: ['*/status'], verbs: ['get'] })), true);
    assert.equal(ruleAllows(a, rule({ apiGroups: [''], resources: ['*/scale'], verbs: ['get'] })), false);
    assert.equal(ruleAllows(a, rule({ apiGroups: [''], resources: ['*'], verbs: ['get'] })), true);
  });

  it('resourceNames restrict to the named objects; a list (no name) is not allowed by them', () => {
    const r = rule({ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list'], resourceNames: ['a'] });
    assert.equal(ruleAllows(res('get', 'secrets', { name: 'a' }), r), true);
    assert.equal(ruleAllows(res('get', 'secrets', { name: 'b' }), r), false);
    assert.equal(ruleAllows(res('list', 'secrets'), r), false);
  });

  it('nonResourceURLs match exactly or by a trailing * prefix; resource rules never match paths', () => {
    const r = rule({ nonResourceURLs: ['/healthz', '/apis/*', '/logs*'], verbs: ['get'] });
    assert.equal(ruleAllows(path('get', '/healthz'), r), true);
    assert.equal(ruleAllows(path('get', '/healthz/etcd'), r), false);
    assert.equal(ruleAllows(path('get', '/apis/apps/v1'), r), true);
    assert.equal(ruleAllows(path('get', '/apis'), r), false);
    assert.equal(ruleAllows(path('get', '/logsfoo'), r), true);
    assert.equal(ruleAllows(path('post', '/healthz'), r), false);
    assert.equal(ruleAllows(path('get', '/anything'), rule({ nonResourceURLs: ['*'], verbs: ['*'] })), true);
    assert.equal(ruleAllows(path('get', '/healthz'), rule({ apiGroups: ['*'], resources: ['*'], verbs: ['*'] })), false);
  });
});

describe('covers (upstream escalation check)', () => {
  it('covers a rule by wildcards, exact lists, */subresource and name lists', () => {
    const owner = [rule({ apiGroups: [''], resources: ['configmaps', '*/status'], verbs: ['get', 'list'] })];
    assert.equal(covers(owner, [rule({ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] })]).covered, true);
    assert.equal(covers(owner, [rule({ apiGroups: [''], resources: ['namespaces/status'], verbs: ['list'] })]).covered, true);
    assert.equal(covers(owner, [rule({ apiGroups: [''], resources: ['configmaps'], verbs: ['get'], resourceNames: ['x'] })]).covered, true);
    const named = [rule({ apiGroups: [''], resources: ['configmaps'], verbs: ['get'], resourceNames: ['x'] })];
    assert.equal(covers(named, [rule({ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] })]).covered, false);
    assert.equal(covers([rule({ nonResourceURLs: ['/api/*'], verbs: ['get'] })], [rule({ nonResourceURLs: ['/api/v1'], verbs: ['get'] })]).covered, true);
  });

  it('lists what is missing, compacted and sorted, as upstream words it', () => {
    const owner = [rule({ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] })];
    const result = covers(owner, [rule({ apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['get', 'list'] })]);
    assert.equal(result.covered, false);
    assert.equal(describeMissing(result.missing), '{APIGroups:[""], Resources:["configmaps"], Verbs:["list"]}\n{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}');
  });

  it('gives up on rules that break down into too many single permissions', () => {
    const many = Array.from({ length: 100 }, (_, i) => `r${i}`);
    const result = covers([], [rule({ apiGroups: many, resources: many, verbs: many })]);
    assert.deepEqual(result, { covered: false, missing: [], tooLarge: true });
  });

  it('compactString and compactRules follow upstream', () => {
    assert.equal(compactString(rule({ nonResourceURLs: ['/x'], verbs: ['get'] })), '{NonResourceURLs:["/x"], Verbs:["get"]}');
    const merged = compactRules([rule({ apiGroups: ['a'], resources: ['b'], verbs: ['get'] }), rule({ apiGroups: ['a'], resources: ['b'], verbs: ['list', 'get'] })]);
    assert.deepEqual(merged.map((r) => r.verbs), [['get', 'list']]);
  });
});
