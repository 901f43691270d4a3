import { Gauge, type Registry } from 'prom-client';

/** A feature's maturity, as upstream's featuregate stages. */
export type FeatureStage = 'ALPHA' | 'BETA' | 'GA' | 'DEPRECATED';

/** One known feature gate. */
export interface FeatureSpec {
  name: string;
  stage: FeatureStage;
  default: boolean;
  /** GA (and some deprecated) gates cannot be set to anything but their default. */
  lockToDefault?: boolean;
}

/**
 * The gates Plinth's own behaviour consults, with kube-apiserver 1.35's
 * stage, default and lock for the upstream ones: MutatingAdmissionPolicy
 * beta since 1.34, CoordinatedLeaderElection beta since 1.33,
 * StorageVersionMigrator beta since 1.35 (all three off by default),
 * AllowParsingUserUIDFromCertAuth beta and on since 1.34,
 * AllowUnsafeMalformedObjectDeletion alpha, StructuredAuthenticationConfiguration
 * GA and locked on since 1.34.
 */
export const KNOWN_FEATURES: readonly FeatureSpec[] = [
  { name: 'AllowParsingUserUIDFromCertAuth', stage: 'BETA', default: true },
  { name: 'AllowUnsafeMalformedObjectDeletion', stage: 'ALPHA', default: false },
  { name: 'CBORServingAndStorage', stage: 'ALPHA', default: false },
  { name: 'MutatingAdmissionPolicy', stage: 'BETA', default: false },
  { name: 'CoordinatedLeaderElection', stage: 'BETA', default: false },
  { name: 'StorageVersionMigrator', stage: 'BETA', default: false },
  { name: 'StructuredAuthenticationConfiguration', stage: 'GA', default: true, lockToDefault: true },
  { name: 'ServerSideApply', stage: 'GA', default: true, lockToDefault: true },
  { name: 'ValidatingAdmissionPolicy', stage: 'GA', default: true, lockToDefault: true },
];

/** A feature gate setting that cannot be used; start-up stops with this message. */
export class FeatureGateError extends Error {}

const STAGES: Record<string, FeatureStage> = { alpha: 'ALPHA', beta: 'BETA', ga: 'GA', deprecated: 'DEPRECATED' };

/**
 * Gates the operator defines for CRD authors (`PLINTH_FEATURE_GATE_DEFINITIONS`,
 * `Name=Stage` separated by commas; Stage is Alpha, Beta, GA or
 * Deprecated). As upstream's conventions: Alpha and Deprecated default to
 * off, Beta and GA to on, GA is locked. A name Plinth already defines is
 * refused. Throws FeatureGateError; returns the specs otherwise.
 */
export function parseFeatureDefinitions(setting: string, known: readonly FeatureSpec[] = KNOWN_FEATURES): FeatureSpec[] {
  const out: FeatureSpec[] = [];
  for (const part of setting.split(',').map((p) => p.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    const name = (eq < 0 ? part : part.slice(0, eq)).trim();
    const stage = STAGES[(eq < 0 ? '' : part.slice(eq + 1)).trim().toLowerCase()];
    if (!/^[A-Z][A-Za-z0-9]*$/.test(name)) throw new FeatureGateError(`invalid feature gate name ${JSON.stringify(name)}: must be UpperCamelCase letters and digits`);
    if (!stage) throw new FeatureGateError(`feature gate ${name} needs a stage: ${name}=Alpha, Beta, GA or Deprecated`);
    if (known.some((k) => k.name === name) || out.some((k) => k.name === name)) throw new FeatureGateError(`feature gate ${name} is already defined`);
    out.push({ name, stage, default: stage === 'BETA' || stage === 'GA', lockToDefault: stage === 'GA' });
  }
  return out;
}

/**
 * Feature gates with upstream's `--feature-gates` syntax (`A=true,B=false`):
 * unknown names and changes to a locked gate are refused with upstream's
 * messages; `enabled(name)` answers for known gates only.
 */
export class FeatureGates {
  private readonly values = new Map<string, boolean>();
  private readonly specs = new Map<string, FeatureSpec>();

  constructor(setting = '', known: readonly FeatureSpec[] = KNOWN_FEATURES) {
    for (const f of known) {
      this.specs.set(f.name, f);
      this.values.set(f.name, f.default);
    }
    for (const part of setting.split(',').map((p) => p.trim()).filter(Boolean)) {
      const eq = part.indexOf('=');
      if (eq < 0) throw new FeatureGateError(`missing bool value for ${part}`);
      const name = part.slice(0, eq).trim();
      const raw = part.slice(eq + 1).trim();
      const value = parseBool(raw);
      if (value === undefined) throw new FeatureGateError(`invalid value of ${name}=${raw}, err: strconv.ParseBool: parsing "${raw}": invalid syntax`);
      const spec = this.specs.get(name);
      if (!spec) throw new FeatureGateError(`unrecognized feature gate: ${name}`);
      if (spec.lockToDefault && value !== spec.default) throw new FeatureGateError(`cannot set feature gate ${name} to ${value}, feature is locked to ${spec.default}`);
      this.values.set(name, value);
    }
  }

  /** Whether `name` is on. Throws for a gate Plinth does not know (a programming error). */
  enabled(name: string): boolean {
    const v = this.values.get(name);
    if (v === undefined) throw new Error(`feature gate ${name} is not registered`);
    return v;
  }

  /** Whether `name` is a registered gate. */
  has(name: string): boolean {
    return this.values.has(name);
  }

  /** The stage of gate `name`, or undefined for a gate nobody defined. */
  stage(name: string): FeatureStage | undefined {
    return this.specs.get(name)?.stage;
  }

  /** Every gate with its stage and value. */
  all(): Array<FeatureSpec & { enabled: boolean }> {
    return [...this.specs.values()].map((s) => ({ ...s, enabled: this.values.get(s.name)! }));
  }

  /** Registers upstream's `kubernetes_feature_enabled{name,stage}` gauge (1 on, 0 off). */
  register(registry: Registry): void {
    const gauge = new Gauge({ name: 'kubernetes_feature_enabled', help: 'This metric records the data about the stage and enablement of a k8s feature.', labelNames: ['name', 'stage'] as const, registers: [registry] });
    for (const f of this.all()) gauge.set({ name: f.name, stage: f.stage === 'GA' ? '' : f.stage }, f.enabled ? 1 : 0);
  }
}

/** Go's strconv.ParseBool. */
function parseBool(s: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(s)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(s)) return false;
  return undefined;
}
