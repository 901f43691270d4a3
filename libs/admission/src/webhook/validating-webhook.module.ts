import type { AdmissionAttributes, AdmissionOperation } from '../admission-attributes.js';
import type { AdmissionModule, AdmissionResult } from '../admission-module.js';
import type { InvocationTarget } from './admission-review.js';
import type { CompiledWebhook } from './compiled-webhook.js';
import { isExemptFromWebhooks } from './webhook-configuration.js';
import { WebhookCallError } from './webhook-errors.js';
import { WebhookInvoker } from './webhook-invoker.js';
import { matchWebhook, type NamespaceLabelMemo } from './webhook-matcher.js';
import { toVersion, type WebhookModuleDependencies } from './webhook-module-support.js';

/**
 * ValidatingAdmissionWebhook: calls every matching validating webhook of
 * the tenant in parallel and rejects with the first error to arrive (a
 * denial, or a call failure under failurePolicy Fail), as upstream.
 * Webhook configuration kinds are never sent to webhooks.
 */
export class ValidatingWebhookModule implements AdmissionModule {
  static readonly NAME = 'ValidatingAdmissionWebhook';
  readonly name = ValidatingWebhookModule.NAME;
  private readonly invoker: WebhookInvoker;

  constructor(private readonly deps: WebhookModuleDependencies) {
    this.invoker = new WebhookInvoker(deps);
  }

  handles(_op: AdmissionOperation): boolean {
    return true;
  }

  async validate(attrs: AdmissionAttributes, result: AdmissionResult): Promise<void> {
    if (isExemptFromWebhooks(attrs.kind.group, attrs.kind.kind)) return;
    const hooks = await this.deps.source.webhooks(attrs.tenant, 'validating');
    if (hooks.length === 0) return;
    const memo: NamespaceLabelMemo = new Map();
    const calls: Array<{ hook: CompiledWebhook; target: InvocationTarget }> = [];
    for (const hook of hooks) {
      const target = await matchWebhook(hook, attrs, this.deps, memo);
      if (target) calls.push({ hook, target });
    }
    if (calls.length === 0) return;
    const errors: unknown[] = [];
    await Promise.all(
      calls.map(async ({ hook, target }) => {
        const objects = { object: toVersion(attrs.object, attrs.kind, target.kind), oldObject: toVersion(attrs.oldObject, attrs.kind, target.kind) };
        try {
          await this.invoker.call(hook, target, attrs, objects, result.warnings);
        } catch (err) {
          if (err instanceof WebhookCallError) {
            if (hook.failurePolicy !== 'Ignore') errors.push(err.toAdmissionError());
            return;
          }
          errors.push(err);
        }
      }),
    );
    if (errors.length > 0) throw errors[0];
  }
}
