import { type FieldError, fieldErrors, isPlainObject, type KubeObject } from '@plinth/apimachinery';
import type { ResourceStrategy, StrategyContext } from '../../registry/resource-definition.js';

const STAGES = ['Alpha', 'Beta', 'GA', 'Deprecated'];
const GATE_NAME = /^[A-Z][A-Za-z0-9]*$/;

function specOf(obj: KubeObject): Record<string, unknown> {
  return isPlainObject(obj.spec) ? obj.spec : {};
}

/** Defaults `spec.default` from the stage, as upstream's conventions (Beta and GA on). Mutates `obj`. */
function defaultGate(obj: KubeObject): void {
  const spec = specOf(obj);
  if (isPlainObject(obj.spec) && spec.default === undefined && STAGES.includes(String(spec.stage))) spec.default = spec.stage === 'Beta' || spec.stage === 'GA';
}

/** A tenant's FeatureGate: name format, one object per gate, no clash with the server's gates, GA locked. */
function validateGate(obj: KubeObject, ctx: StrategyContext): FieldError[] {
  const spec = specOf(obj);
  const errs: FieldError[] = [];
  const name = typeof spec.name === 'string' ? spec.name : '';
  if (!name) errs.push(fieldErrors.required('spec.name'));
  else if (!GATE_NAME.test(name)) errs.push(fieldErrors.invalid('spec.name', name, 'must be UpperCamelCase letters and digits (e.g. "Frobber2D")'));
  else if (ctx.isServerFeature(name)) errs.push(fieldErrors.invalid('spec.name', name, 'is a feature gate of the server'));
  if (name && obj.metadata.name !== name.toLowerCase()) errs.push(fieldErrors.invalid('metadata.name', obj.metadata.name, 'must be spec.name in lower case'));
  if (spec.stage === undefined) errs.push(fieldErrors.required('spec.stage'));
  else if (!STAGES.includes(String(spec.stage))) errs.push(fieldErrors.notSupported('spec.stage', spec.stage, STAGES));
  if (spec.stage === 'GA' && spec.default !== true) errs.push(fieldErrors.invalid('spec.default', spec.default, 'a GA feature gate is on by default'));
  if (spec.stage === 'GA' && typeof spec.enabled === 'boolean' && spec.enabled !== spec.default) {
    errs.push(fieldErrors.invalid('spec.enabled', spec.enabled, `cannot set feature gate ${name} to ${String(spec.enabled)}, feature is locked to ${String(spec.default)}`));
  }
  return errs;
}

/** features.plinth.dev/v1alpha1 FeatureGate: defaults by stage; `spec.name` is immutable (CRDs refer to it). */
export const featureGateStrategy: ResourceStrategy = {
  prepareForCreate: (obj) => defaultGate(obj),
  prepareForUpdate: (obj) => defaultGate(obj),
  validate: (obj, ctx) => validateGate(obj, ctx),
  validateUpdate: (obj, old, ctx) => {
    const errs = validateGate(obj, ctx);
    if (specOf(obj).name !== specOf(old).name) errs.push(fieldErrors.invalid('spec.name', specOf(obj).name, 'field is immutable'));
    return errs;
  },
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};
