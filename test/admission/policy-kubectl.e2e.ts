import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { kubectl, type KubectlResult, writeTestKubeconfig } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { eventually } from '../support/eventually.js';

function ok(r: KubectlResult): string {
  assert.equal(r.code, 0, `kubectl failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

const POLICIES = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: no-prod-secrets
spec:
  paramKind:
    apiVersion: v1
    kind: ConfigMap
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [configmaps]
  validations:
  - expression: "!has(object.data) || !('password' in object.data)"
    message: configmaps must not hold passwords
  - expression: "!has(object.data) || object.data.size() <= 3"
    messageExpression: "'at most 3 keys, got ' + string(object.data.size())"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: no-prod-secrets-deny
spec:
  policyName: no-prod-secrets
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels: {env: prod}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: no-prod-secrets-warn
spec:
  policyName: no-prod-secrets
  validationActions: [Warn]
  paramRef:
    name: settings
    namespace: default
    parameterNotFoundAction: Allow
  matchResources:
    namespaceSelector:
      matchLabels: {env: dev}
`;

describe('kubectl with admission policies', () => {
  let s: TestServer;
  let kc: string;
  const k = (args: string[], input?: string) => kubectl(kc, args, input);

  before(async () => {
    s = await startTestServer('policy-kubectl', { PLINTH_FEATURE_GATES: 'MutatingAdmissionPolicy=true', PLINTH_RUNTIME_CONFIG: 'admissionregistration.k8s.io/v1alpha1=true' });
    kc = writeTestKubeconfig(s.url);
    ok(await k(['create', 'namespace', 'prod']));
    ok(await k(['label', 'namespace', 'prod', 'env=prod']));
    ok(await k(['create', 'namespace', 'dev']));
    ok(await k(['label', 'namespace', 'dev', 'env=dev']));
    ok(await k(['create', 'configmap', 'settings', '-n', 'default', '--from-literal=mode=strict']));
  });
  after(async () => s?.close());

  it('creates policies and bindings with kubectl apply and lists them with upstream columns', async () => {
    const out = ok(await k(['apply', '-f', '-'], POLICIES));
    assert.match(out, /validatingadmissionpolicy.admissionregistration.k8s.io\/no-prod-secrets created/);
    assert.match(out, /validatingadmissionpolicybinding.admissionregistration.k8s.io\/no-prod-secrets-deny created/);
    const policies = ok(await k(['get', 'validatingadmissionpolicies']));
    assert.match(policies, /^NAME\s+VALIDATIONS\s+PARAMKIND\s+AGE$/m);
    assert.match(policies, /^no-prod-secrets\s+2\s+v1\/ConfigMap\s+\S+$/m);
    const bindings = ok(await k(['get', 'validatingadmissionpolicybindings']));
    assert.match(bindings, /^NAME\s+POLICYNAME\s+PARAMREF\s+AGE$/m);
    assert.match(bindings, /^no-prod-secrets-deny\s+no-prod-secrets\s+<unset>\s+\S+$/m);
    assert.match(bindings, /^no-prod-secrets-warn\s+no-prod-secrets\s+default\/settings\s+\S+$/m);
    const described = ok(await k(['describe', 'validatingadmissionpolicy', 'no-prod-secrets']));
    assert.match(described, /Name:\s+no-prod-secrets/);
    assert.match(described, /Expression:\s+!has\(object.data\) \|\| !\('password' in object.data\)/);
    const explained = ok(await k(['explain', 'validatingadmissionpolicy.spec.validations']));
    assert.match(explained, /messageExpression/);
  });

  it('shows the denial message of a Deny binding', async () => {
    const r = await eventually(async () => {
      const res = await k(['create', 'configmap', 'db', '-n', 'prod', '--from-literal=password=hunter2']);
      assert.notEqual(res.code, 0, 'denied');
      return res;
    });
    assert.equal(
      r.stderr.trim(),
      `error: failed to create configmap: configmaps "db" is forbidden: ValidatingAdmissionPolicy 'no-prod-secrets' with binding 'no-prod-secrets-deny' denied request: configmaps must not hold passwords`,
    );
    const many = await k(['create', 'configmap', 'many', '-n', 'prod', '--from-literal=a=1', '--from-literal=b=2', '--from-literal=c=3', '--from-literal=d=4']);
    assert.match(many.stderr, /denied request: at most 3 keys, got 4$/m);
  });

  it('shows the warning of a Warn binding and creates the object', async () => {
    const r = await eventually(async () => {
      const res = await k(['create', 'configmap', 'db', '-n', 'dev', '--from-literal=password=hunter2']);
      assert.equal(res.code, 0, res.stderr);
      return res;
    });
    assert.match(r.stderr, /^Warning: Validation failed for ValidatingAdmissionPolicy 'no-prod-secrets' with binding 'no-prod-secrets-warn': configmaps must not hold passwords$/m);
    assert.match(r.stdout, /configmap\/db created/);
  });

  it('applies and lists a MutatingAdmissionPolicy whose mutation kubectl then shows', async () => {
    const map = `apiVersion: admissionregistration.k8s.io/v1alpha1
kind: MutatingAdmissionPolicy
metadata:
  name: stamp
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [configmaps]
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"stamped": "yes"}}}'
---
apiVersion: admissionregistration.k8s.io/v1alpha1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: stamp
spec:
  policyName: stamp
`;
    ok(await k(['apply', '-f', '-'], map));
    assert.match(ok(await k(['get', 'mutatingadmissionpolicies'])), /^stamp\s+1\s+<unset>\s+\S+$/m);
    await eventually(async () => {
      ok(await k(['create', 'configmap', `stamped-${Date.now()}`, '-n', 'dev']));
      const labels = ok(await k(['get', 'configmaps', '-n', 'dev', '-l', 'stamped=yes', '-o', 'name']));
      assert.match(labels, /configmap\/stamped-/);
    });
  });
});
