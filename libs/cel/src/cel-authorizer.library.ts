import type { Environment } from '@marcbachmann/cel-js';
import { chargeCost } from './cel-metering.js';

/** One authorization question, as upstream's authorizer attributes (the user is the authorizer's). */
export interface CelAuthzQuestion {
  resourceRequest: boolean;
  verb: string;
  group: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  path: string;
  /** KEP-4601: the field selector `fieldSelector()` set, raw (the authorizer parses it; one that does not parse is left out). */
  fieldSelector?: string;
  /** KEP-4601: the label selector `labelSelector()` set, raw. */
  labelSelector?: string;
}

/** The answer to {@link CelAuthzQuestion}; `error` set when it could not be decided. */
export interface CelAuthzAnswer {
  allowed: boolean;
  reason: string;
  error?: string;
}

/** Decides for one user; `asServiceAccount` gives the authorizer of a ServiceAccount of the same tenant. */
export interface CelAuthzBackend {
  check(q: CelAuthzQuestion): CelAuthzAnswer;
  asServiceAccount(namespace: string, name: string): CelAuthzBackend;
}

/** CEL `kubernetes.authorization.Decision`. */
export class CelAuthzDecision {
  constructor(readonly answer: CelAuthzAnswer) {}
}

/** CEL `kubernetes.authorization.ResourceCheck`: built up with group/resource/…, then `check(verb)`. */
export class CelResourceCheck {
  constructor(
    readonly backend: CelAuthzBackend,
    readonly group = '',
    readonly resource = '',
    readonly subresource = '',
    readonly namespace = '',
    readonly name = '',
    readonly fieldSelector = '',
    readonly labelSelector = '',
  ) {}

  with(field: 'group' | 'resource' | 'subresource' | 'namespace' | 'name' | 'fieldSelector' | 'labelSelector', value: string): CelResourceCheck {
    const n = { group: this.group, resource: this.resource, subresource: this.subresource, namespace: this.namespace, name: this.name, fieldSelector: this.fieldSelector, labelSelector: this.labelSelector, [field]: value };
    return new CelResourceCheck(this.backend, n.group, n.resource, n.subresource, n.namespace, n.name, n.fieldSelector, n.labelSelector);
  }
}

/** CEL `kubernetes.authorization.PathCheck`. */
export class CelPathCheck {
  constructor(
    readonly backend: CelAuthzBackend,
    readonly path: string,
  ) {}
}

/** CEL `kubernetes.authorization.Authorizer` (the policy variable `authorizer`); `requestResource` is the request's own resource. */
export class CelAuthorizer {
  constructor(
    readonly backend: CelAuthzBackend,
    readonly requestResource: CelResourceCheck,
  ) {}
}

/** Upstream's fixed cost of one `check()` (library/cost.go): at most two checks fit one expression's 1,000,000. */
export const AUTHZ_CHECK_COST = 350_000;

function decide(backend: CelAuthzBackend, q: CelAuthzQuestion): CelAuthzDecision {
  chargeCost(AUTHZ_CHECK_COST);
  try {
    return new CelAuthzDecision(backend.check(q));
  } catch (err) {
    return new CelAuthzDecision({ allowed: false, reason: '', error: (err as Error).message });
  }
}

/**
 * Upstream's CEL authorizer library (k8s.io/apiserver/pkg/cel/library/authz.go):
 * `authorizer.group(g).resource(r).subresource(s).namespace(n).name(x).check(verb)`,
 * `…fieldSelector(s)`, `…labelSelector(s)` (KEP-4601: passed to the authorizer),
 * `authorizer.path(p).check(verb)`, `authorizer.serviceAccount(ns, name)`,
 * `authorizer.requestResource.check(verb)`, and on a decision `allowed()`,
 * `reason()`, `errored()`, `error()`.
 */
export function registerAuthorizerLibrary(env: Environment): void {
  env.registerType('Authorizer', { ctor: CelAuthorizer, fields: { requestResource: 'ResourceCheck' } } as never);
  env.registerType('ResourceCheck', CelResourceCheck);
  env.registerType('PathCheck', CelPathCheck);
  env.registerType('Decision', CelAuthzDecision);
  env.registerFunction('Authorizer.group(string): ResourceCheck', (a: CelAuthorizer, g: string) => new CelResourceCheck(a.backend, g));
  env.registerFunction('Authorizer.path(string): PathCheck', (a: CelAuthorizer, p: string) => new CelPathCheck(a.backend, p));
  env.registerFunction('Authorizer.serviceAccount(string, string): Authorizer', (a: CelAuthorizer, ns: string, name: string) => {
    const backend = a.backend.asServiceAccount(ns, name);
    return new CelAuthorizer(backend, new CelResourceCheck(backend));
  });
  // KEP-4601 (authorizer.group('').resource('pods').fieldSelector('spec.nodeName=n').check('list')).
  for (const field of ['resource', 'subresource', 'namespace', 'name', 'fieldSelector', 'labelSelector'] as const) {
    env.registerFunction(`ResourceCheck.${field}(string): ResourceCheck`, (c: CelResourceCheck, v: string) => c.with(field, v));
  }
  env.registerFunction('ResourceCheck.check(string): Decision', (c: CelResourceCheck, verb: string) =>
    decide(c.backend, {
      resourceRequest: true,
      verb,
      group: c.group,
      resource: c.resource,
      subresource: c.subresource,
      namespace: c.namespace,
      name: c.name,
      path: '',
      ...(c.fieldSelector ? { fieldSelector: c.fieldSelector } : {}),
      ...(c.labelSelector ? { labelSelector: c.labelSelector } : {}),
    }),
  );
  env.registerFunction('PathCheck.check(string): Decision', (c: CelPathCheck, verb: string) =>
    decide(c.backend, { resourceRequest: false, verb, group: '', resource: '', subresource: '', namespace: '', name: '', path: c.path }),
  );
  env.registerFunction('Decision.allowed(): bool', (d: CelAuthzDecision) => d.answer.allowed);
  env.registerFunction('Decision.reason(): string', (d: CelAuthzDecision) => d.answer.reason);
  env.registerFunction('Decision.errored(): bool', (d: CelAuthzDecision) => d.answer.error !== undefined);
  env.registerFunction('Decision.error(): string', (d: CelAuthzDecision) => d.answer.error ?? '');
}
