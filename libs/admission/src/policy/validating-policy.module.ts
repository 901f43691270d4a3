import type { AdmissionAttributes, AdmissionOperation } from '../admission-attributes.js';
import { AdmissionError } from '../admission-error.js';
import type { AdmissionModule, AdmissionResult } from '../admission-module.js';
import { isExemptFromWebhooks } from '../webhook/webhook-configuration.js';
import type { NamespaceLabelMemo } from '../webhook/webhook-matcher.js';
import { toVersion } from '../webhook/webhook-module-support.js';
import type { CompiledBinding, CompiledValidatingPolicy } from './compiled-policy.js';
import { PolicyActivation, type ValidateResult, validatePolicy } from './policy-evaluator.js';
import { policyErrorType } from './policy-metrics.js';
import { matchResources, type PolicyMatchTarget } from './policy-match.js';
import {
  configurationMessage,
  failsClosed,
  namespaceForCel,
  namespaceNameFor,
  policyDenial,
  type PolicyModuleDependencies,
  policyRequest,
} from './policy-module-support.js';
import { collectParams } from './policy-params.js';

/** A denial waiting to be reported (the first one wins, as upstream). */
interface Denial {
  policy: string;
  binding?: string;
  message: string;
  reason: string;
}

/** The JSON value of the `validation.policy.admission.k8s.io/validation_failure` audit annotation. */
interface ValidationFailure {
  message: string;
  policy: string;
  binding: string;
  expressionIndex: number;
  validationActions: string[];
}

const MAX_VALIDATION_FAILURES = 50;
const MAX_AUDIT_VALUE = 10 * 1024;

/** Per-request state of the validating policy phase. */
class Dispatch {
  readonly denied: Denial[] = [];
  readonly failures: ValidationFailure[] = [];
  readonly memo: NamespaceLabelMemo = new Map();
  private namespace?: Promise<Record<string, unknown> | null>;

  constructor(
    readonly attrs: AdmissionAttributes,
    readonly result: AdmissionResult,
    private readonly deps: PolicyModuleDependencies,
  ) {}

  configError(policy: CompiledValidatingPolicy, binding: CompiledBinding | undefined, err: unknown): void {
    if (!failsClosed(policy)) return;
    this.denied.push({ policy: policy.name, binding: binding?.name, message: configurationMessage(err, !!binding), reason: 'Invalid' });
  }

  /** The request's namespace for `namespaceObject`; a missing namespace fails the request with 404 as upstream. */
  namespaceObject(): Promise<Record<string, unknown> | null> {
    const name = namespaceNameFor(this.attrs);
    if (!name) return Promise.resolve(null);
    this.namespace ??= this.deps.namespaceObject(this.attrs.tenant, name).then((ns) => {
      if (!ns) throw AdmissionError.notFound('', 'namespaces', name);
      return namespaceForCel(ns);
    });
    return this.namespace;
  }
}

/**
 * ValidatingAdmissionPolicy: evaluates every ValidatingAdmissionPolicy of
 * the tenant that matches the request, once per matching binding and
 * param, as upstream's validating policy dispatcher: Deny actions reject
 * (the first denial, `ValidatingAdmissionPolicy 'p' with binding 'b'
 * denied request: …`, with the validation's reason and its code), Warn
 * actions add `Warning` headers, Audit actions add the
 * `validation.policy.admission.k8s.io/validation_failure` audit annotation.
 * Configuration errors and expression errors follow the policy's
 * failurePolicy. Runs before the validating webhooks.
 */
export class ValidatingPolicyModule implements AdmissionModule {
  static readonly NAME = 'ValidatingAdmissionPolicy';
  readonly name = ValidatingPolicyModule.NAME;

  constructor(private readonly deps: PolicyModuleDependencies) {}

  handles(_op: AdmissionOperation): boolean {
    return true;
  }

  async validate(attrs: AdmissionAttributes, result: AdmissionResult): Promise<void> {
    if (isExemptFromWebhooks(attrs.kind.group, attrs.kind.kind)) return;
    const snapshot = await this.deps.source.snapshot(attrs.tenant);
    if (snapshot.validating.length === 0) return;
    const d = new Dispatch(attrs, result, this.deps);
    for (const hook of snapshot.validating) {
      let target: PolicyMatchTarget | undefined;
      try {
        target = await matchResources(hook.policy.match, attrs, this.deps, d.memo);
      } catch (err) {
        d.configError(hook.policy, undefined, err);
        continue;
      }
      if (!target) continue;
      const annotations = new Map<string, string[]>();
      for (const binding of hook.bindings) await this.evaluateBinding(d, hook.policy, binding, target, annotations);
      this.publishAnnotations(result, hook.policy.name, annotations);
    }
    if (d.failures.length > 0 && result.auditAnnotations) {
      result.auditAnnotations['validation.policy.admission.k8s.io/validation_failure'] = JSON.stringify(d.failures.slice(0, MAX_VALIDATION_FAILURES));
    }
    const first = d.denied[0];
    if (first) {
      const message = first.binding
        ? `ValidatingAdmissionPolicy '${first.policy}' with binding '${first.binding}' denied request: ${first.message}`
        : `ValidatingAdmissionPolicy '${first.policy}' denied request: ${first.message}`;
      throw policyDenial(attrs, message, first.reason);
    }
  }

  private async evaluateBinding(
    d: Dispatch,
    policy: CompiledValidatingPolicy,
    binding: CompiledBinding,
    target: PolicyMatchTarget,
    annotations: Map<string, string[]>,
  ): Promise<void> {
    const { attrs } = d;
    try {
      if (binding.match && !(await matchResources(binding.match, attrs, this.deps, d.memo))) return;
    } catch (err) {
      d.configError(policy, binding, err);
      return;
    }
    let params: Array<Record<string, unknown> | null>;
    try {
      params = await collectParams(this.deps.params, attrs.tenant, policy.paramKind, binding.binding.spec?.paramRef, attrs.namespace);
    } catch (err) {
      d.configError(policy, binding, err);
      this.observe(attrs.tenant, policy, binding, 'deny', 'invalid_error', 0);
      return;
    }
    if (params.length === 0) return;
    const namespaceObject = await d.namespaceObject();
    const object = toVersion(attrs.object, attrs.kind, target.kind);
    const oldObject = toVersion(attrs.oldObject, attrs.kind, target.kind);
    const request = policyRequest(attrs, target);
    const authorizer = this.deps.authorizer?.(attrs);
    for (const param of params) {
      const started = performance.now();
      const evaluate = () => {
        const act = new PolicyActivation(this.deps.cel, policy, { object, oldObject, request, params: param, namespaceObject, authorizer });
        return this.deps.meter ? this.deps.meter(attrs.tenant, () => validatePolicy(policy, act)) : validatePolicy(policy, act);
      };
      let res = evaluate();
      // Authorizer checks a webhook could not answer synchronously: awaited, then evaluated again with their answers (twice at most: a check may depend on another's).
      for (let round = 0; round < 2 && authorizer !== undefined && (await this.deps.settleAuthorizer?.(authorizer)); round++) res = evaluate();
      this.apply(d, policy, binding, res, annotations, (performance.now() - started) / 1000);
    }
  }

  private apply(
    d: Dispatch,
    policy: CompiledValidatingPolicy,
    binding: CompiledBinding,
    res: ValidateResult,
    annotations: Map<string, string[]>,
    seconds: number,
  ): void {
    let observed = false;
    for (const decision of res.decisions) {
      if (decision.action !== 'deny') {
        if (decision.evaluation === 'error') {
          this.observe(d.attrs.tenant, policy, binding, 'allow', policyErrorType('error', decision.message), seconds);
          observed = true;
        }
        continue;
      }
      const errorType = policyErrorType(decision.evaluation, decision.message);
      for (const action of binding.validationActions) {
        if (action === 'Deny') {
          d.denied.push({ policy: policy.name, binding: binding.name, message: decision.message, reason: decision.reason ?? 'Invalid' });
          this.observe(d.attrs.tenant, policy, binding, 'deny', errorType, seconds);
        } else if (action === 'Warn') {
          d.result.warnings.push(`Validation failed for ValidatingAdmissionPolicy '${policy.name}' with binding '${binding.name}': ${decision.message}`);
          this.observe(d.attrs.tenant, policy, binding, 'warn', errorType, seconds);
        } else if (action === 'Audit') {
          d.failures.push({
            message: decision.message,
            policy: policy.name,
            binding: binding.name,
            expressionIndex: Math.max(decision.index, 0),
            validationActions: binding.validationActions,
          });
          this.observe(d.attrs.tenant, policy, binding, 'audit', errorType, seconds);
        }
        observed = true;
      }
    }
    for (const a of res.auditAnnotations) {
      if (a.action === 'publish') {
        const values = annotations.get(a.key) ?? [];
        const value = a.value!.slice(0, MAX_AUDIT_VALUE);
        if (!values.includes(value)) values.push(value);
        annotations.set(a.key, values);
      } else if (a.action === 'error') {
        d.denied.push({ policy: policy.name, binding: binding.name, message: a.error!, reason: 'Invalid' });
        this.observe(d.attrs.tenant, policy, binding, 'deny', 'invalid_error', seconds);
        observed = true;
      }
    }
    if (!observed) this.observe(d.attrs.tenant, policy, binding, 'allow', 'no_error', seconds);
  }

  private publishAnnotations(result: AdmissionResult, policy: string, annotations: Map<string, string[]>): void {
    if (!result.auditAnnotations) return;
    for (const [key, values] of annotations) result.auditAnnotations[`${policy}/${key}`] = values.join(', ');
  }

  private observe(
    tenant: string,
    policy: CompiledValidatingPolicy,
    binding: CompiledBinding,
    enforcementAction: 'deny' | 'warn' | 'audit' | 'allow',
    errorType: ReturnType<typeof policyErrorType>,
    seconds: number,
  ): void {
    this.deps.metrics?.observe({ tenant, type: 'validating', policy: policy.name, binding: binding.name, enforcementAction, errorType, seconds });
  }
}
