import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { AuthorizationConfigError, parseAuthorizationConfiguration } from './authorization-configuration.js';
import { evaluateAuthzConditions } from '../../kinds/authorization/authorization-match-conditions.js';

const dir = mkdtempSync(path.join(tmpdir(), 'plinth-authz-config-'));
const kubeconfig = path.join(dir, 'webhook.kubeconfig');
writeFileSync(
  kubeconfig,
  `apiVersion: v1
kind: Config
clusters: [{name: w, cluster: {server: "https://127.0.0.1:9443/authorize", certificate-authority-data: ${Buffer.from('CA PEM').toString('base64')}}}]
users: [{name: u, user: {token: secret-token}}]
contexts: [{name: c, context: {cluster: w, user: u}}]
current-context: c
`,
);

const webhook = (extra: Record<string, unknown> = {}) => ({
  timeout: '3s',
  authorizedTTL: '5m',
  unauthorizedTTL: '30s',
  subjectAccessReviewVersion: 'v1',
  failurePolicy: 'NoOpinion',
  connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: kubeconfig },
  ...extra,
});
const file = (authorizers: unknown[], apiVersion = 'apiserver.config.k8s.io/v1') => JSON.stringify({ apiVersion, kind: 'AuthorizationConfiguration', authorizers });
const refusal = (text: string, required?: Set<string>): string => {
  try {
    parseAuthorizationConfiguration(text, required);
  } catch (err) {
    assert.ok(err instanceof AuthorizationConfigError, String(err));
    return err.message;
  }
  assert.fail('accepted');
};

describe('AuthorizationConfiguration', () => {
  it('parses an ordered chain of webhooks and RBAC, v1 and v1beta1, YAML or JSON, reading the kubeconfig', () => {
    const chain = parseAuthorizationConfiguration(
      file([
        { type: 'Webhook', name: 'first', webhook: webhook({ matchConditionSubjectAccessReviewVersion: 'v1', matchConditions: [{ expression: "request.user != 'admin'" }] }) },
        { type: 'RBAC', name: 'rbac' },
        { type: 'Webhook', name: 'last', webhook: webhook({ failurePolicy: 'Deny', subjectAccessReviewVersion: 'v1beta1' }) },
      ]),
    );
    assert.deepEqual(
      chain.map((e) => `${e.type}/${e.name}`),
      ['Webhook/first', 'RBAC/rbac', 'Webhook/last'],
    );
    const first = chain[0];
    assert.ok(first.type === 'Webhook');
    assert.equal(first.webhook.timeoutMs, 3000);
    assert.equal(first.webhook.authorizedTtlMs, 300_000);
    assert.equal(first.webhook.unauthorizedTtlMs, 30_000);
    assert.equal(first.webhook.connection.url.href, 'https://127.0.0.1:9443/authorize');
    assert.equal(first.webhook.connection.ca, 'CA PEM');
    assert.equal(first.webhook.connection.token, 'secret-token');
    assert.equal(first.webhook.matchConditions.length, 1);
    const yaml = parseAuthorizationConfiguration('apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: RBAC\n  name: rbac\n- type: AlwaysDeny\n  name: alwaysdeny\n');
    assert.deepEqual(yaml, [{ type: 'RBAC', name: 'rbac' }, { type: 'AlwaysDeny', name: 'alwaysdeny' }]);
  });

  it('refuses Node and ABAC, which Plinth does not serve, and unknown types', () => {
    assert.match(refusal(file([{ type: 'Node', name: 'node' }, { type: 'RBAC', name: 'rbac' }])), /^authorizers\[0\]\.type: Invalid value: "Node": Plinth serves no nodes/);
    assert.match(refusal(file([{ type: 'ABAC', name: 'abac' }])), /^authorizers\[0\]\.type: Invalid value: "ABAC": Plinth does not serve ABAC/);
    assert.match(refusal(file([{ type: 'Magic', name: 'm' }])), /authorizers\[0\]\.type: Unsupported value: "Magic": supported values: "ABAC", "AlwaysAllow"/);
  });

  it('validates names, types and webhook fields as upstream, listing every error', () => {
    assert.equal(refusal(file([])), 'authorizers: Required value: at least one authorization mode must be defined');
    assert.match(refusal(file([{ type: 'RBAC', name: 'rbac' }, { type: 'RBAC', name: 'rbac2' }])), /authorizers\[1\]\.type: Duplicate value: "RBAC"/);
    assert.match(refusal(file([{ type: 'Webhook', name: 'a', webhook: webhook() }, { type: 'Webhook', name: 'a', webhook: webhook() }])), /authorizers\[1\]\.name: Duplicate value: "a"/);
    assert.match(refusal(file([{ type: 'RBAC', name: 'RBAC' }])), /authorizers\[0\]\.name: Invalid value: "RBAC": authorizer name is invalid/);
    assert.match(refusal(file([{ type: 'RBAC', name: 'mine' }])), /authorizers\[0\]\.name: Invalid value: "mine": expected name rbac for authorizer RBAC/);
    assert.match(refusal(file([{ type: 'Webhook', name: 'w' }])), /authorizers\[0\]\.webhook: Required value: required when type=Webhook/);
    assert.match(refusal(file([{ type: 'RBAC', name: 'rbac', webhook: webhook() }])), /authorizers\[0\]\.webhook: Invalid value: "non-null": may only be specified when type=Webhook/);
    const many = refusal(file([{ type: 'Webhook', name: 'w', webhook: { connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: 'relative.yaml' } } }]));
    for (const want of [
      'authorizers[0].webhook.timeout: Required value',
      'authorizers[0].webhook.authorizedTTL: Required value',
      'authorizers[0].webhook.unauthorizedTTL: Required value',
      'authorizers[0].webhook.subjectAccessReviewVersion: Required value',
      'authorizers[0].webhook.failurePolicy: Required value',
      'authorizers[0].webhook.connectionInfo.kubeConfigFile: Invalid value: "relative.yaml": must be an absolute path',
    ]) {
      assert.ok(many.includes(want), `${want} in ${many}`);
    }
    assert.match(refusal(file([{ type: 'Webhook', name: 'w', webhook: webhook({ timeout: '31s' }) }])), /webhook\.timeout: Invalid value: "31s": must be > 0s and <= 30s/);
    assert.match(refusal(file([{ type: 'Webhook', name: 'w', webhook: webhook({ authorizedTTL: '-1s' }) }])), /webhook\.authorizedTTL: Invalid value: "-1s": must be > 0s/);
    assert.match(refusal(file([{ type: 'Webhook', name: 'w', webhook: webhook({ failurePolicy: 'Allow' }) }])), /webhook\.failurePolicy: Unsupported value: "Allow": supported values: "NoOpinion", "Deny"/);
    assert.match(refusal(file([{ type: 'Webhook', name: 'w', webhook: webhook({ subjectAccessReviewVersion: 'v2' }) }])), /webhook\.subjectAccessReviewVersion: Unsupported value: "v2"/);
    assert.match(refusal(file([{ type: 'Webhook', name: 'w', webhook: webhook({ matchConditions: [{ expression: 'true' }] }) }])), /webhook\.matchConditionSubjectAccessReviewVersion: Required value: required if match conditions are specified/);
    assert.match(refusal(file([{ type: 'Webhook', name: 'w', webhook: webhook({ connectionInfo: { type: 'InClusterConfig' } }) }])), /webhook\.connectionInfo\.type: Invalid value: "InClusterConfig"/);
    assert.match(refusal(file([{ type: 'Webhook', name: 'w', webhook: webhook({ connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: path.join(dir, 'none') } }) }])), /kubeConfigFile: Invalid value: .*error loading file/);
  });

  it('compiles matchConditions at load: a bad expression, a non-bool, an unknown field and duplicates name the field', () => {
    const conditions = (list: string[]) =>
      file([{ type: 'RBAC', name: 'rbac' }, { type: 'Webhook', name: 'w', webhook: webhook({ matchConditionSubjectAccessReviewVersion: 'v1', matchConditions: list.map((expression) => ({ expression })) }) }]);
    assert.match(refusal(conditions(['request.user ==='])), /^authorizers\[1\]\.webhook\.matchConditions\[0\]\.expression: Invalid value: "request\.user ===": compilation failed: /);
    assert.match(refusal(conditions(['true', "request.user + 'x'"])), /matchConditions\[1\]\.expression: Invalid value: .*must evaluate to bool but got string/);
    assert.match(refusal(conditions(['request.nosuchfield == 1'])), /matchConditions\[0\]\.expression: Invalid value: .*compilation failed: .*nosuchfield/);
    assert.match(refusal(conditions(['true', 'true'])), /matchConditions\[1\]\.expression: Duplicate value: "true"/);
    assert.match(refusal(conditions(['  '])), /matchConditions\[0\]\.expression: Required value/);
  });

  it('on reload, keeps every non-webhook type the server started with', () => {
    assert.match(refusal(file([{ type: 'Webhook', name: 'w', webhook: webhook() }]), new Set(['RBAC'])), /missing required types: \[RBAC\]/);
  });

  it('evaluates matchConditions over the review spec: false skips, errors are reported, selectors only to conditions that read them', () => {
    const [entry] = parseAuthorizationConfiguration(
      file([
        {
          type: 'Webhook',
          name: 'w',
          webhook: webhook({
            matchConditionSubjectAccessReviewVersion: 'v1',
            matchConditions: [{ expression: 'has(request.resourceAttributes)' }, { expression: "request.resourceAttributes.labelSelector.requirements.exists(r, r.key == 'team')" }],
          }),
        },
      ]),
    );
    assert.ok(entry.type === 'Webhook');
    const spec = (ra: Record<string, unknown>) => ({ user: 'u', groups: ['g'], resourceAttributes: { verb: 'list', resource: 'pods', ...ra } });
    assert.deepEqual(evaluateAuthzConditions(entry.webhook.matchConditions, spec({ labelSelector: { requirements: [{ key: 'team', operator: 'In', values: ['a'] }] } })), { matches: true });
    assert.deepEqual(evaluateAuthzConditions(entry.webhook.matchConditions, { user: 'u', nonResourceAttributes: { path: '/x', verb: 'get' } }), { matches: false });
    const failed = evaluateAuthzConditions(entry.webhook.matchConditions, spec({}));
    assert.ok('error' in failed && /expression 'request\.resourceAttributes\.labelSelector/.test(failed.error), JSON.stringify(failed));
  });
});
