import { isDeepStrictEqual } from 'node:util';
import jsonpatch, { type Operation } from 'fast-json-patch';
import type { AdmissionAttributes, AdmissionOperation } from '../admission-attributes.js';
import { AdmissionError } from '../admission-error.js';
import type { AdmissionModule, AdmissionResult } from '../admission-module.js';
import { ReinvocationContext } from '../reinvocation-context.js';
import { isExemptFromWebhooks } from '../webhook/webhook-configuration.js';
import type { NamespaceLabelMemo } from '../webhook/webhook-matcher.js';
import type { CompiledBinding } from './compiled-policy.js';
import type { CompiledMutatingPolicy, CompiledMutation } from './mutating-policy.compiler.js';
import { evaluateConditions, PolicyActivation } from './policy-evaluator.js';
import { matchResources, type PolicyMatchTarget } from './policy-match.js';
import { configurationMessage, namespaceForCel, namespaceNameFor, type PolicyModuleDependencies, policyRequest } from './policy-module-support.js';
import { collectParams } from './policy-params.js';

/** Per-request reinvocation bookkeeping, as upstream's policyReinvokeContext. */
class PolicyReinvokeState {
  lastOutput: unknown = undefined;
  previouslyInvoked = new Set<string>();
  reinvoke = new Set<string>();
}

/** A policy error waiting for the failure policy. */
interface PolicyError {
  policy: CompiledMutatingPolicy;
  binding?: string;
  message: string;
  reason?: string;
}

/** One policy, binding and param to run the mutations of. */
interface Invocation {
  policy: CompiledMutatingPolicy;
  binding: CompiledBinding;
  target: PolicyMatchTarget;
  param: Record<string, unknown> | null;
}

/** Merges an apply configuration into an object (server-side-apply merge semantics, by the kind's schema). */
export type ApplyConfigurationMerger = (attrs: AdmissionAttributes, object: Record<string, unknown>, patch: Record<string, unknown>) => Record<string, unknown>;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function keyOf(inv: Invocation): string {
  const meta = (inv.param?.metadata ?? {}) as { name?: string; namespace?: string };
  return `${inv.policy.name}\u0000${inv.binding.name}\u0000${meta.namespace ?? ''}/${meta.name ?? ''}`;
}

/**
 * MutatingAdmissionPolicy (admissionregistration.k8s.io/v1alpha1): applies
 * the mutations of every matching policy, binding and param in order
 * (policies by name, bindings by name), each on the result of the last, as
 * upstream's mutating policy dispatcher: JSONPatch lists are applied as
 * RFC 6902 patches (a failed `test` leaves the object unchanged),
 * ApplyConfiguration objects are merged with server-side-apply semantics.
 * Errors follow the policy's failurePolicy and reject with
 * `policy 'p' with binding 'b' denied request: …` (403). Policies with
 * reinvocationPolicy IfNeeded run again in the chain's second pass when a
 * later mutation changed the object. Runs before the mutating webhooks.
 */
export class MutatingPolicyModule implements AdmissionModule {
  static readonly NAME = 'MutatingAdmissionPolicy';
  readonly name = MutatingPolicyModule.NAME;

  constructor(
    private readonly deps: PolicyModuleDependencies,
    private readonly mergeApplyConfiguration: ApplyConfigurationMerger,
  ) {}

  handles(op: AdmissionOperation): boolean {
    return op === 'CREATE' || op === 'UPDATE' || op === 'CONNECT';
  }

  async admit(attrs: AdmissionAttributes, result: AdmissionResult): Promise<void> {
    if (isExemptFromWebhooks(attrs.kind.group, attrs.kind.kind)) return;
    const snapshot = await this.deps.source.snapshot(attrs.tenant);
    if (snapshot.mutating.length === 0 || attrs.object === null) return;
    const ctx = result.reinvocation ?? new ReinvocationContext();
    const state = ctx.state(MutatingPolicyModule.NAME, () => new PolicyReinvokeState());
    if (ctx.isReinvoke && !isDeepStrictEqual(state.lastOutput, attrs.object)) state.reinvoke = new Set(state.previouslyInvoked);
    const errors: PolicyError[] = [];
    const invocations = await this.invocations(attrs, snapshot.mutating, errors);
    if (invocations.length > 0) await this.run(attrs, ctx, state, invocations, errors);
    state.lastOutput = structuredClone(attrs.object);
    const failing = errors.filter((e) => e.policy.failurePolicy !== 'Ignore');
    if (failing.length > 0) throw this.denial(attrs, failing);
  }

  private async invocations(
    attrs: AdmissionAttributes,
    hooks: Array<{ policy: CompiledMutatingPolicy; bindings: CompiledBinding[] }>,
    errors: PolicyError[],
  ): Promise<Invocation[]> {
    const memo: NamespaceLabelMemo = new Map();
    const out: Invocation[] = [];
    for (const { policy, bindings } of hooks) {
      let target: PolicyMatchTarget | undefined;
      try {
        target = await matchResources(policy.match, attrs, this.deps, memo);
      } catch (err) {
        errors.push({ policy, message: configurationMessage(err, false) });
        continue;
      }
      if (!target) continue;
      for (const binding of bindings) {
        try {
          if (binding.match && !(await matchResources(binding.match, attrs, this.deps, memo))) continue;
          const params = await collectParams(this.deps.params, attrs.tenant, policy.paramKind, binding.binding.spec?.paramRef, attrs.namespace);
          for (const param of params) out.push({ policy, binding, target, param });
        } catch (err) {
          errors.push({ policy, binding: binding.name, message: configurationMessage(err, true) });
        }
      }
    }
    return out;
  }

  private async run(attrs: AdmissionAttributes, ctx: ReinvocationContext, state: PolicyReinvokeState, invocations: Invocation[], errors: PolicyError[]): Promise<void> {
    const nsName = namespaceNameFor(attrs);
    let namespaceObject: Record<string, unknown> | null = null;
    if (nsName) {
      const ns = await this.deps.namespaceObject(attrs.tenant, nsName);
      if (!ns) throw AdmissionError.notFound('', 'namespaces', nsName);
      namespaceObject = namespaceForCel(ns);
    }
    const authorizer = this.deps.authorizer?.(attrs);
    for (const inv of invocations) {
      const key = keyOf(inv);
      if (ctx.isReinvoke && !state.reinvoke.has(key)) continue;
      const started = performance.now();
      const before = structuredClone(attrs.object);
      const meter = <T>(fn: () => T): T => (this.deps.meter ? this.deps.meter(attrs.tenant, fn) : fn());
      const input = () => ({ object: attrs.object, oldObject: attrs.oldObject, request: policyRequest(attrs, inv.target), params: inv.param, namespaceObject, authorizer });
      const cond = meter(() => evaluateConditions(inv.policy, new PolicyActivation(this.deps.cel, inv.policy, input())));
      if ('error' in cond) {
        errors.push({ policy: inv.policy, binding: inv.binding.name, message: cond.error, reason: 'Invalid' });
        continue;
      }
      if (!cond.matches) continue;
      let failed = false;
      for (const mutation of inv.policy.mutations) {
        try {
          const act = new PolicyActivation(this.deps.cel, inv.policy, input());
          attrs.object = meter(() => this.mutate(attrs, mutation, act));
        } catch (err) {
          if (err instanceof AdmissionError || (err as { code?: unknown }).code === 429) throw err;
          errors.push({ policy: inv.policy, binding: inv.binding.name, message: err instanceof Error ? err.message : String(err), reason: 'Invalid' });
          failed = true;
        }
      }
      this.observe(attrs.tenant, inv, failed, (performance.now() - started) / 1000);
      if (!isDeepStrictEqual(before, attrs.object)) {
        state.reinvoke = new Set(state.previouslyInvoked);
        ctx.shouldReinvoke = true;
      }
      if (inv.policy.reinvokeIfNeeded) state.previouslyInvoked.add(key);
    }
  }

  /** Applies one mutation to `attrs.object`; returns the new object. Throws Error with upstream's text on failure. */
  private mutate(attrs: AdmissionAttributes, mutation: CompiledMutation, act: PolicyActivation): Record<string, unknown> {
    const object = attrs.object!;
    if (!mutation.compiled.program) throw new Error(mutation.compiled.error ?? 'compilation failed');
    const r = act.run(mutation.compiled);
    if (!r.ok) throw new Error(r.error);
    const value = this.deps.cel.toJson(r.value);
    let patched: Record<string, unknown>;
    if (mutation.patchType === 'JSONPatch') {
      if (!Array.isArray(value)) throw new Error('type mismatch: JSONPatchType.expression should evaluate to array');
      const ops = value.map((op) => {
        if (!isPlainObject(op)) throw new Error(`type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch, got element of ${typeof op}`);
        return op as unknown as Operation;
      });
      try {
        patched = jsonpatch.applyPatch(structuredClone(object), ops, true, true).newDocument as Record<string, unknown>;
      } catch (err) {
        if ((err as { name?: string }).name === 'TEST_OPERATION_FAILED') return object;
        throw new Error(`JSON Patch: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
      }
    } else {
      if (!isPlainObject(value)) throw new Error(`unsupported return type from ApplyConfiguration expression: ${Array.isArray(value) ? 'list' : typeof value}`);
      patched = this.mergeApplyConfiguration(attrs, structuredClone(object), value);
    }
    return this.deps.normalizePatched ? this.deps.normalizePatched(attrs, patched) : patched;
  }

  private denial(attrs: AdmissionAttributes, errors: PolicyError[]): AdmissionError {
    const messages = errors.map((e) =>
      e.binding ? `policy '${e.policy.name}' with binding '${e.binding}' denied request: ${e.message}` : `policy "${e.policy.name}" denied request: ${e.message}`,
    );
    const name = attrs.name || ((attrs.object?.metadata as { name?: string } | undefined)?.name ?? '');
    return new AdmissionError({
      code: 403,
      reason: errors[0].reason ?? 'Forbidden',
      message: messages[0],
      details: { name: name || undefined, group: attrs.resource.group || undefined, kind: attrs.resource.resource, causes: messages.map((message) => ({ message })) },
    });
  }

  private observe(tenant: string, inv: Invocation, failed: boolean, seconds: number): void {
    this.deps.metrics?.observe({
      tenant,
      type: 'mutating',
      policy: inv.policy.name,
      binding: inv.binding.name,
      enforcementAction: failed ? 'deny' : 'allow',
      errorType: failed ? 'invalid_error' : 'no_error',
      seconds,
    });
  }
}
