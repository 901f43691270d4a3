import { type FieldError, fieldErrors, isPlainObject, type KubeObject } from '@plinth/apimachinery';

/**
 * Gated fields and enum values, by upstream's rules for adding unstable
 * features to a stable API (api_changes.md): while a field's gate is off,
 * the field is dropped on create, and on update unless the stored object
 * already uses it; while an enum value's gate is off, the value is refused
 * on create, and on update unless the stored object already holds it
 * (`only allowed if the X feature is enabled`). Data is never lost when a
 * gate is turned off again. Kinds declare their gates in their strategy;
 * custom resources in their schema (`x-plinth-feature-gate`).
 */

/** What the helpers need to know about gates (a StrategyContext fits). */
export interface GateReader {
  featureEnabled(name: string): boolean;
}

/** A field only servers with `gate` on honour. `path` is dotted from the root; `*` is every item of a list or value of a map. */
export interface GatedField {
  path: string;
  gate: string;
}

/** An enum value at `path` (as GatedField) only servers with `gate` on accept. */
export interface GatedEnumValue {
  path: string;
  value: string;
  gate: string;
}

interface Slot {
  holder: Record<string, unknown>;
  key: string;
  /** The concrete field path, e.g. `spec.items[1].size`. */
  field: string;
}

/** Every place `path` names in `obj` (present or not at the last step); never throws. */
function slots(obj: unknown, path: string): Slot[] {
  let current: Array<{ value: unknown; field: string }> = [{ value: obj, field: '' }];
  const steps = path.split('.');
  const out: Slot[] = [];
  steps.forEach((step, i) => {
    const last = i === steps.length - 1;
    const next: Array<{ value: unknown; field: string }> = [];
    for (const { value, field } of current) {
      if (step === '*') {
        if (Array.isArray(value)) value.forEach((v, j) => next.push({ value: v, field: `${field}[${j}]` }));
        else if (isPlainObject(value)) for (const [k, v] of Object.entries(value)) next.push({ value: v, field: `${field}[${k}]` });
        continue;
      }
      if (!isPlainObject(value)) continue;
      const f = field ? `${field}.${step}` : step;
      if (last) out.push({ holder: value, key: step, field: f });
      else next.push({ value: value[step], field: f });
    }
    current = next;
  });
  return out;
}

function isSet(v: unknown): boolean {
  return v !== undefined && v !== null && v !== '';
}

/** Whether `obj` sets the field at `path` anywhere. */
function uses(obj: KubeObject | undefined, path: string): boolean {
  return obj !== undefined && slots(obj, path).some((s) => isSet(s.holder[s.key]));
}

/** Whether `obj` holds `value` at `path` anywhere. */
function holds(obj: KubeObject | undefined, path: string, value: string): boolean {
  return obj !== undefined && slots(obj, path).some((s) => s.holder[s.key] === value);
}

/**
 * Upstream's dropDisabledFields: removes every field of `fields` whose
 * gate is off, unless `old` (the stored object; undefined on create)
 * already uses it. Mutates `obj`.
 */
export function dropDisabledFields(obj: KubeObject, old: KubeObject | undefined, fields: readonly GatedField[], gates: GateReader): void {
  for (const f of fields) {
    if (gates.featureEnabled(f.gate) || uses(old, f.path)) continue;
    for (const s of slots(obj, f.path)) delete s.holder[s.key];
  }
}

/**
 * Refuses enum values whose gate is off, unless `old` (undefined on
 * create) already holds the value at that path. Returns one Invalid error
 * per occurrence; does not mutate.
 */
export function validateGatedEnumValues(obj: KubeObject, old: KubeObject | undefined, values: readonly GatedEnumValue[], gates: GateReader): FieldError[] {
  const errs: FieldError[] = [];
  for (const v of values) {
    if (gates.featureEnabled(v.gate) || holds(old, v.path, v.value)) continue;
    for (const s of slots(obj, v.path)) {
      if (s.holder[s.key] === v.value) errs.push(fieldErrors.invalid(s.field, v.value, `only allowed if the ${v.gate} feature is enabled`));
    }
  }
  return errs;
}

function levelOf(stage: string | undefined): string | undefined {
  return stage === 'ALPHA' ? 'alpha' : stage === 'BETA' ? 'beta' : undefined;
}

/** The sentence OpenAPI and `kubectl explain` add to a gated field's description (empty for GA and deprecated gates). */
export function gatedFieldDescription(gate: string, stage: string | undefined): string {
  const level = levelOf(stage);
  return level ? `This field is ${level}-level and is only honored by servers that enable the ${gate} feature.` : '';
}

/** The sentences added to the description of a field with gated enum values (empty when none is alpha or beta). */
export function gatedValuesDescription(values: ReadonlyArray<{ value: string; gate: string }>, stage: (gate: string) => string | undefined): string {
  return values
    .flatMap((v) => {
      const level = levelOf(stage(v.gate));
      return level ? [`The value "${v.value}" is ${level}-level and is only honored by servers that enable the ${v.gate} feature.`] : [];
    })
    .join(' ');
}
