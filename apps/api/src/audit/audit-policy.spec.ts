import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { AuditLogWriter } from './audit-log.writer.js';
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

describe('AuditLogWriter', () => {
  it('rotates by size, keeps maxBackups files, and loses no line', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'plinth-audit-rotate-'));
    const file = path.join(dir, 'audit.log');
    let dropped = 0;
    const w = new AuditLogWriter({ path: file, maxBytes: 400, maxBackups: 2, maxBufferedBytes: 1 << 20, dropped: () => dropped++ });
    for (let i = 0; i < 30; i++) {
      w.write({ i, pad: 'x'.repeat(60) });
      await new Promise((r) => setTimeout(r, 2));
    }
    await w.close();
    await new Promise((r) => setTimeout(r, 50));
    const files = readdirSync(dir).sort();
    assert.equal(files.filter((f) => f.startsWith('audit-')).length, 2);
    assert.ok(files.includes('audit.log'));
    const kept = files.flatMap((f) => readFileSync(path.join(dir, f), 'utf8').trim().split('\n').filter(Boolean)).map((l) => JSON.parse(l).i as number);
    // The newest lines are all there, in the kept files, each once.
    assert.equal(new Set(kept).size, kept.length);
    assert.ok(kept.includes(29));
    assert.equal(dropped, 0);
  });
});
