import { isDeepStrictEqual } from 'node:util';
import jsonpatch, { type Operation } from 'fast-json-patch';
import type { AdmissionAttributes, AdmissionOperation } from '../admission-attributes.js';
import { AdmissionError } from '../admission-error.js';
import type { AdmissionModule, AdmissionResult } from '../admission-module.js';
import type { InvocationTarget } from './admission-review.js';
import type { CompiledWebhook } from './compiled-webhook.js';
import { isExemptFromWebhooks } from './webhook-configuration.js';
import { WebhookCallError } from './webhook-errors.js';
import { WebhookInvoker } from './webhook-invoker.js';
import { matchWebhook, type NamespaceLabelMemo } from './webhook-matcher.js';
import { toVersion, type WebhookModuleDependencies } from './webhook-module-support.js';

/** Per-request reinvocation bookkeeping, as upstream's webhookReinvokeContext. */
class ReinvokeState {
  lastOutput: unknown = undefined;
  previouslyInvoked = new Set<string>();
  reinvoke = new Set<string>();
  readonly memo: NamespaceLabelMemo = new Map();

  /** Webhooks already called with IfNeeded must see the object again. */
  requireReinvokingPrevious(): void {
    for (const uid of this.previouslyInvoked) this.reinvoke.add(uid);
    this.previouslyInvoked.clear();
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0];
}

/**
 * MutatingAdmissionWebhook: calls the tenant's mutating webhooks serially,
 * configurations sorted by name and webhooks in listed order, applying
 * each JSON patch before the next call (re-validated by
 * `normalizePatched`). Honours failurePolicy, dry run, and
 * reinvocationPolicy IfNeeded (a webhook already called is called again in
 * the chain's second pass when a later webhook changed the object).
 * Webhook configuration kinds are never sent to webhooks.
 */
export class MutatingWebhookModule implements AdmissionModule {
  static readonly NAME = 'MutatingAdmissionWebhook';
  readonly name = MutatingWebhookModule.NAME;
  private readonly invoker: WebhookInvoker;

  constructor(private readonly deps: WebhookModuleDependencies) {
    this.invoker = new WebhookInvoker(deps);
  }

  handles(_op: AdmissionOperation): boolean {
    return true;
  }

  async admit(attrs: AdmissionAttributes, result: AdmissionResult): Promise<void> {
    if (isExemptFromWebhooks(attrs.kind.group, attrs.kind.kind)) return;
    const hooks = await this.deps.source.webhooks(attrs.tenant, 'mutating');
    if (hooks.length === 0) return;
    const reinvocation = result.reinvocation;
    const state = reinvocation?.state(MutatingWebhookModule.NAME, () => new ReinvokeState()) ?? new ReinvokeState();
    const isReinvoke = reinvocation?.isReinvoke ?? false;
    // In-tree modules that ran after us may have changed the object: every IfNeeded webhook runs again.
    if (isReinvoke && !isDeepStrictEqual(state.lastOutput, attrs.object)) state.requireReinvokingPrevious();
    const tracksOutput = hooks.some((h) => h.reinvokeIfNeeded);
    try {
      for (const hook of hooks) {
        // A webhook is never called for the first time during reinvocation.
        if (isReinvoke && !state.reinvoke.has(hook.uid)) continue;
        const target = await matchWebhook(hook, attrs, this.deps, state.memo);
        if (!target) continue;
        let changed = false;
        let failure: unknown;
        try {
          changed = await this.callOne(hook, target, attrs, result.warnings);
        } catch (err) {
          failure = err;
        }
        if (changed) {
          state.requireReinvokingPrevious();
          if (reinvocation) reinvocation.shouldReinvoke = true;
        }
        if (hook.reinvokeIfNeeded) state.previouslyInvoked.add(hook.uid);
        if (failure === undefined) continue;
        if (failure instanceof WebhookCallError) {
          if (hook.failurePolicy === 'Ignore') continue;
          throw failure.toAdmissionError();
        }
        throw failure;
      }
    } finally {
      if (tracksOutput) state.lastOutput = attrs.object === null ? null : structuredClone(attrs.object);
    }
  }

  /** Calls one webhook and applies its patch to `attrs.object`. Returns whether the object changed. */
  private async callOne(hook: CompiledWebhook, target: InvocationTarget, attrs: AdmissionAttributes, warnings: string[]): Promise<boolean> {
    const object = toVersion(attrs.object, attrs.kind, target.kind);
    const oldObject = toVersion(attrs.oldObject, attrs.kind, target.kind);
    const response = await this.invoker.call(hook, target, attrs, { object, oldObject }, warnings);
    if (response.patch === undefined) return false;
    let ops: unknown;
    try {
      ops = JSON.parse(response.patch);
    } catch (err) {
      throw new WebhookCallError(hook.name, `received undecodable patch in webhook response: ${firstLine(err)}`, 'response');
    }
    if (!Array.isArray(ops)) throw new WebhookCallError(hook.name, 'received undecodable patch in webhook response: a JSON patch must be an array', 'response');
    if (ops.length === 0) return false;
    if (object === null) {
      throw AdmissionError.internal(`admission webhook "${hook.name}" attempted to modify the object, which is not supported for this operation`);
    }
    if (response.patchType !== 'JSONPatch') throw new WebhookCallError(hook.name, `unsupported patch type "${response.patchType ?? ''}"`, 'response');
    let patched: unknown;
    try {
      patched = jsonpatch.applyPatch(structuredClone(object), ops as Operation[], true, true).newDocument;
    } catch (err) {
      throw AdmissionError.internal(firstLine(err));
    }
    if (!isPlainObject(patched)) throw AdmissionError.internal(`admission webhook "${hook.name}" replaced the object with a non-object`);
    let next = toVersion(patched, target.kind, attrs.kind);
    if (this.deps.normalizePatched) {
      try {
        next = this.deps.normalizePatched(attrs, next);
      } catch (err) {
        if (err instanceof AdmissionError) throw err;
        throw AdmissionError.internal(firstLine(err));
      }
    }
    const changed = !isDeepStrictEqual(attrs.object, next);
    attrs.object = next;
    return changed;
  }
}
