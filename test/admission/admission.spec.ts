import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AdmissionChain,
  type AdmissionAttributes,
  AdmissionError,
  type AdmissionModule,
  compileWebhooks,
  evaluateMatchConditions,
  compileMatchConditions,
  matchWebhook,
  ruleMatches,
  ServiceResolver,
  StaticWebhookSource,
  ValidatingWebhookModule,
  MutatingWebhookModule,
  verifyAdmissionResponse,
  WebhookClient,
  WebhookConfigurationCache,
  type WebhookConfigurationV1,
  webhookRejection,
} from '@plinth/admission';

function attrs(over: Partial<AdmissionAttributes> = {}): AdmissionAttributes {
  return {
    tenant: 'default',
    user: { username: 'u', groups: [] },
    operation: 'CREATE',
    kind: { group: '', version: 'v1', kind: 'ConfigMap' },
    resource: { group: '', version: 'v1', resource: 'configmaps' },
    subresource: '',
    namespace: 'ns',
    name: 'cm',
    object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'ns', labels: { a: 'b' } }, data: { k: 'v' } },
    oldObject: null,
    options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
    dryRun: false,
    namespaced: true,
    ...over,
  };
}

function config(name: string, hook: Record<string, unknown>): WebhookConfigurationV1 {
  return {
    metadata: { name },
    webhooks: [
      {
        name: `${name}.plinth.test`,
        clientConfig: { url: 'https://127.0.0.1:1/' },
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        ...hook,
      },
    ],
  };
}

describe('AdmissionChain', () => {
  const mod = (name: string, log: string[], extra: Partial<AdmissionModule> = {}): AdmissionModule => ({
    name,
    handles: () => true,
    admit: async (_a, r) => {
      log.push(`${name}:admit:${r.reinvocation?.isReinvoke ? 'again' : 'first'}`);
    },
    ...extra,
  });

  it('fails on a duplicate module name and reports the phases in order', () => {
    assert.throws(() => new AdmissionChain([mod('A', []), mod('A', [])]), /duplicate admission module "A"/);
    const chain = new AdmissionChain([mod('A', []), { name: 'V', handles: () => true, validate: async () => undefined }, mod('B', [])]);
    assert.deepEqual(chain.names(), ['A', 'V', 'B']);
    assert.deepEqual(chain.phases(), { mutating: ['A', 'B'], validating: ['V'] });
  });

  it('runs the mutating phase a second time when a module asks for reinvocation', async () => {
    const log: string[] = [];
    const asking = mod('B', log, {
      admit: async (_a, r) => {
        log.push(`B:admit:${r.reinvocation?.isReinvoke ? 'again' : 'first'}`);
        if (!r.reinvocation!.isReinvoke) r.reinvocation!.shouldReinvoke = true;
      },
    });
    await new AdmissionChain([mod('A', log), asking]).admit(attrs(), { warnings: [] });
    assert.deepEqual(log, ['A:admit:first', 'B:admit:first', 'A:admit:again', 'B:admit:again']);
  });
});

describe('rule matching', () => {
  const target = (resource: string, subresource = '', namespace = 'ns', operation: 'CREATE' | 'UPDATE' = 'CREATE') => ({
    operation,
    resource: { group: '', version: 'v1', resource },
    subresource,
    namespace,
  });
  const rule = (resources: string[], extra: Record<string, unknown> = {}) => ({ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources, ...extra });

  it('matches resources and subresources with the upstream wildcards', () => {
    assert.ok(ruleMatches(rule(['*']), target('configmaps')));
    assert.ok(!ruleMatches(rule(['*']), target('namespaces', 'status')));
    assert.ok(ruleMatches(rule(['*/*']), target('namespaces', 'status')));
    assert.ok(ruleMatches(rule(['namespaces/*']), target('namespaces', 'finalize')));
    // As upstream's matcher (not its docs), `x/*` also matches x itself.
    assert.ok(ruleMatches(rule(['namespaces/*']), target('namespaces')));
    assert.ok(!ruleMatches(rule(['namespaces/*']), target('configmaps')));
    assert.ok(ruleMatches(rule(['*/status']), target('namespaces', 'status')));
    assert.ok(!ruleMatches(rule(['*/status']), target('namespaces', 'finalize')));
    assert.ok(!ruleMatches(rule(['secrets']), target('configmaps')));
  });

  it('matches operations, groups, versions and scope', () => {
    assert.ok(!ruleMatches(rule(['*'], { operations: ['UPDATE'] }), target('configmaps')));
    assert.ok(!ruleMatches(rule(['*'], { apiGroups: ['apps'] }), target('configmaps')));
    assert.ok(!ruleMatches(rule(['*'], { apiVersions: ['v2'] }), target('configmaps')));
    assert.ok(ruleMatches(rule(['*'], { scope: 'Namespaced' }), target('configmaps')));
    assert.ok(!ruleMatches(rule(['*'], { scope: 'Cluster' }), target('configmaps')));
    // Namespace objects are cluster-scoped although their requests name a namespace.
    assert.ok(ruleMatches(rule(['*'], { scope: 'Cluster' }), target('namespaces', '', 'ns1')));
    assert.ok(!ruleMatches(rule(['*'], { scope: 'Namespaced' }), target('namespaces', '', 'ns1')));
  });
});

describe('matchConditions', () => {
  it('skips on any false even next to errors, otherwise reports errors', () => {
    const compiled = compileMatchConditions([
      { name: 'err', expression: "object.data['missing'] == 'x'" },
      { name: 'false', expression: "object.metadata.name == 'other'" },
    ]);
    const a = attrs();
    assert.deepEqual(evaluateMatchConditions(compiled, { object: a.object, oldObject: null, request: {} }), { matches: false, errors: [] });
    const errOnly = evaluateMatchConditions(compiled.slice(0, 1), { object: a.object, oldObject: null, request: {} });
    assert.equal(errOnly.matches, false);
    assert.match(errOnly.errors[0], /^expression 'object.data\['missing'\] == 'x'' resulted in error: no such key/);
    const ints = compileMatchConditions([{ name: 'int', expression: 'object.spec.replicas + 1 == 3 && request.operation == "CREATE"' }]);
    assert.equal(evaluateMatchConditions(ints, { object: { spec: { replicas: 2 } }, oldObject: null, request: { operation: 'CREATE' } }).matches, true);
  });

  it('compiles with the Kubernetes CEL libraries CRD rules have (@plinth/cel)', () => {
    const compiled = compileMatchConditions([
      { name: 'quantity', expression: "quantity(object.spec.memory).isGreaterThan(quantity('1Gi'))" },
      { name: 'url', expression: "isURL(object.spec.url) && url(object.spec.url).getHost() == 'example.com'" },
      { name: 'regex', expression: "object.metadata.name.matches('^[a-z]+$')" },
    ]);
    assert.deepEqual(compiled.map((c) => c.error), [undefined, undefined, undefined]);
    const object = { metadata: { name: 'web' }, spec: { memory: '2Gi', url: 'https://example.com/x' } };
    assert.deepEqual(evaluateMatchConditions(compiled, { object, oldObject: null, request: {} }), { matches: true, errors: [] });
    const small = { ...object, spec: { ...object.spec, memory: '512Mi' } };
    assert.equal(evaluateMatchConditions(compiled, { object: small, oldObject: null, request: {} }).matches, false);
  });

  it('fails closed (403) or skips (Ignore) when a condition errors, and passes the request variable', async () => {
    const deps = { namespaceLabels: async () => ({}) };
    const [fail] = compileWebhooks('validating', [config('f', { matchConditions: [{ name: 'c', expression: "object.data['nope'] == '1'" }] })]);
    await assert.rejects(matchWebhook(fail, attrs(), deps, new Map()), (err: AdmissionError) => {
      assert.equal(err.status.code, 403);
      assert.match(err.message, /^configmaps "cm" is forbidden: expression/);
      return true;
    });
    const [ignore] = compileWebhooks('validating', [config('i', { failurePolicy: 'Ignore', matchConditions: [{ name: 'c', expression: "object.data['nope'] == '1'" }] })]);
    assert.equal(await matchWebhook(ignore, attrs(), deps, new Map()), undefined);
    const [req] = compileWebhooks('validating', [config('r', { matchConditions: [{ name: 'c', expression: "request.namespace == 'ns' && request.userInfo.username == 'u'" }] })]);
    assert.ok(await matchWebhook(req, attrs(), deps, new Map()));
  });
});

describe('webhook matching', () => {
  it('answers 404 for a namespaceSelector on a missing namespace, and never skips other cluster-scoped objects', async () => {
    const [hook] = compileWebhooks('validating', [config('n', { namespaceSelector: { matchLabels: { x: 'y' } }, rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }] })]);
    const deps = { namespaceLabels: async () => undefined };
    await assert.rejects(matchWebhook(hook, attrs(), deps, new Map()), /namespaces "ns" not found/);
    const cluster = attrs({ namespaced: false, namespace: '', kind: { group: 'x.io', version: 'v1', kind: 'Thing' }, resource: { group: 'x.io', version: 'v1', resource: 'things' } });
    assert.ok(await matchWebhook(hook, cluster, deps, new Map()));
  });

  it('calls with an equivalent version under matchPolicy Equivalent, not under Exact', async () => {
    const rules = [{ operations: ['*'], apiGroups: ['x.io'], apiVersions: ['v1beta1'], resources: ['things'] }];
    const [eq, exact] = compileWebhooks('validating', [config('a', { rules }), config('b', { rules, matchPolicy: 'Exact' })]);
    const deps = {
      namespaceLabels: async () => ({}),
      equivalentResources: () => [{ resource: { group: 'x.io', version: 'v1beta1', resource: 'things' }, kind: { group: 'x.io', version: 'v1beta1', kind: 'Thing' } }],
    };
    const a = attrs({ kind: { group: 'x.io', version: 'v1', kind: 'Thing' }, resource: { group: 'x.io', version: 'v1', resource: 'things' } });
    const target = await matchWebhook(eq, a, deps, new Map());
    assert.deepEqual(target?.kind, { group: 'x.io', version: 'v1beta1', kind: 'Thing' });
    assert.equal(await matchWebhook(exact, a, deps, new Map()), undefined);
  });
});

describe('dry run and side effects', () => {
  const deps = (configs: WebhookConfigurationV1[]) => ({
    source: new StaticWebhookSource([], configs),
    client: new WebhookClient(),
    services: ServiceResolver.parse(''),
    namespaceLabels: async () => ({}),
  });

  it('answers 400 "does not support dry run" for sideEffects Some/Unknown, without calling', async () => {
    const module = new ValidatingWebhookModule(deps([config('some', { sideEffects: 'Some' })]));
    await assert.rejects(module.validate!(attrs({ dryRun: true }), { warnings: [] }), (err: AdmissionError) => {
      assert.equal(err.status.code, 400);
      assert.equal(err.status.reason, 'BadRequest');
      assert.equal(err.message, 'admission webhook "some.plinth.test" does not support dry run');
      return true;
    });
  });

  it('fails a dry run on a webhook without sideEffects as a call failure', async () => {
    const m = deps([]);
    const module = new MutatingWebhookModule({ ...m, source: new StaticWebhookSource([config('nil', { sideEffects: undefined })], []) });
    await assert.rejects(module.admit!(attrs({ dryRun: true }), { warnings: [] }), /Internal error occurred: failed calling webhook "nil.plinth.test": Webhook SideEffects is nil/);
  });

  it('never calls webhooks for webhook configuration kinds', async () => {
    const module = new ValidatingWebhookModule(deps([config('all', { rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'] }] })]));
    const a = attrs({
      namespaced: false,
      namespace: '',
      kind: { group: 'admissionregistration.k8s.io', version: 'v1', kind: 'ValidatingWebhookConfiguration' },
      resource: { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations' },
    });
    await module.validate!(a, { warnings: [] });
  });
});

describe('responses and denials', () => {
  it('verifies uid, kind and patch fields as upstream', () => {
    const ok = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'u1', allowed: true } };
    assert.equal(verifyAdmissionResponse('v1', 'u1', false, ok).allowed, true);
    assert.throws(() => verifyAdmissionResponse('v1', 'u1', false, {}), /^Error: webhook response was absent$/);
    assert.throws(() => verifyAdmissionResponse('v1', 'u2', false, ok), /expected response.uid="u2", got "u1"/);
    assert.throws(
      () => verifyAdmissionResponse('v1', 'u1', false, { ...ok, apiVersion: 'v1', kind: 'Nope' }),
      /expected webhook response of admission.k8s.io\/v1, Kind=AdmissionReview, got \/v1, Kind=Nope/,
    );
    const withPatch = { ...ok, response: { ...ok.response, patch: Buffer.from('[]').toString('base64') } };
    assert.throws(() => verifyAdmissionResponse('v1', 'u1', true, withPatch), /webhook returned response.patch but not response.patchType/);
    assert.throws(() => verifyAdmissionResponse('v1', 'u1', false, withPatch), /validating webhook may not return response.patch/);
    assert.equal(verifyAdmissionResponse('v1beta1', 'other', true, withPatch).patchType, 'JSONPatch');
  });

  it('formats denials as ToStatusErr', () => {
    const e = webhookRejection(attrs(), 'h.plinth.test', { message: 'no' });
    assert.deepEqual(e.status, {
      code: 403,
      reason: 'Forbidden',
      message: 'configmaps "cm" is forbidden: admission webhook "h.plinth.test" denied the request: no',
      details: { group: undefined, kind: 'configmaps', name: 'cm' },
    });
    const grouped = webhookRejection(attrs({ name: '', resource: { group: 'x.io', version: 'v1', resource: 'things' } }), 'h', null);
    assert.equal(grouped.message, 'things.x.io "Unknown" is forbidden: admission webhook "h" denied the request without explanation');
    const internal = webhookRejection(attrs(), 'h', { code: 500, message: 'bad' });
    assert.equal(internal.status.reason, 'InternalError');
    assert.equal(internal.message, 'Internal error occurred: admission webhook "h" denied the request: bad');
  });
});

describe('ServiceResolver', () => {
  it('parses the map and prefers the most specific entry', () => {
    const r = ServiceResolver.parse('ns/svc=https://10.0.0.1:9443/base, ns/svc:8443=https://10.0.0.2, acme/ns/svc=https://10.0.0.3');
    assert.equal(r.resolve('default', { namespace: 'ns', name: 'svc', path: '/hook' })?.url.href, 'https://10.0.0.1:9443/base/hook');
    assert.equal(r.resolve('default', { namespace: 'ns', name: 'svc', port: 8443 })?.url.href, 'https://10.0.0.2/');
    assert.equal(r.resolve('acme', { namespace: 'ns', name: 'svc', port: 8443 })?.url.href, 'https://10.0.0.3/');
    assert.equal(r.resolve('default', { namespace: 'ns', name: 'svc' })?.servername, 'svc.ns.svc');
    assert.equal(r.resolve('default', { namespace: 'other', name: 'svc' }), undefined);
    assert.throws(() => ServiceResolver.parse('ns/svc=http://x'), /only https/);
    assert.throws(() => ServiceResolver.parse('nonsense'), /expected \[tenant\/\]namespace\/name/);
  });
});

describe('WebhookConfigurationCache', () => {
  it('serves its snapshot until the change stream reports a change of the tenant, then reads again; a reset outdates every tenant', async () => {
    let loads = 0;
    let configs: WebhookConfigurationV1[] = [];
    const cache = new WebhookConfigurationCache(async (_t, kind) => {
      if (kind === 'validating') loads++;
      return kind === 'validating' ? configs : [];
    });
    const change = (tenant: string) => ({ revision: 1, type: 'ADDED' as const, key: { tenant, resource: 'r', namespace: '', name: 'a' }, object: {}, prevObject: null });
    assert.equal((await cache.webhooks('t', 'validating')).length, 0);
    assert.equal(loads, 1);
    configs = [config('a', {})];
    assert.equal((await cache.webhooks('t', 'validating')).length, 0, 'no change seen: the snapshot is used as is, no query');
    assert.equal(loads, 1);
    cache.observer.onChange(change('other'));
    assert.equal((await cache.webhooks('t', 'validating')).length, 0, "another tenant's change does not outdate this one");
    assert.equal(loads, 1);
    cache.observer.onChange(change('t'));
    assert.equal((await cache.webhooks('t', 'validating')).length, 1, 'read again after its change');
    assert.equal(loads, 2);
    configs = [];
    cache.observer.onReset();
    assert.equal((await cache.webhooks('t', 'validating')).length, 0, 'read again after a reset');
    assert.equal(loads, 3);
  });

  it('never keeps a read that started before a change as current', async () => {
    let release: (() => void) | undefined;
    let configs: WebhookConfigurationV1[] = [];
    const cache = new WebhookConfigurationCache(async (_t, kind) => {
      const snapshot = configs;
      if (kind === 'validating' && release === undefined) await new Promise<void>((r) => (release = r));
      return kind === 'validating' ? snapshot : [];
    });
    const first = cache.webhooks('t', 'validating');
    await new Promise((r) => setImmediate(r));
    configs = [config('a', {})];
    cache.observer.onChange({ revision: 2, type: 'ADDED', key: { tenant: 't', resource: 'r', namespace: '', name: 'a' }, object: {}, prevObject: null });
    release!();
    assert.equal((await first).length, 0);
    assert.equal((await cache.webhooks('t', 'validating')).length, 1, 'the slow read is not served after the change');
  });
});

