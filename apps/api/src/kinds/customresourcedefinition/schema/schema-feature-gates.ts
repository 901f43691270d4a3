import { type FieldError, fieldErrors, type StructuralSchema } from '@plinth/apimachinery';
import { gatedFieldDescription, type GatedEnumValue, type GatedField, gatedValuesDescription } from '../../../features/gated-fields.js';

/**
 * Plinth's CRD schema extensions for feature gates: `x-plinth-feature-gate:
 * Name` on a property gates the property, `x-plinth-feature-gated-values:
 * {value: Name}` gates enum values. Collected once per CRD version (see
 * the compiler), validated when a CRD is written, and described in the
 * published schema (OpenAPI, `kubectl explain`).
 */

/** The gates of one schema: gated fields and enum values, with data paths as gated-fields.ts takes them. */
export interface SchemaGates {
  fields: GatedField[];
  values: GatedEnumValue[];
}

type Visit = (node: StructuralSchema, dataPath: string, schemaPath: string) => void;

/** Visits every node of `schema` below the root with its data path (`spec.items.*.size`) and schema path (`…properties[spec]`). */
function walk(schema: StructuralSchema, dataPath: string, schemaPath: string, visit: Visit): void {
  for (const [name, child] of Object.entries(schema.properties ?? {})) {
    const dp = dataPath ? `${dataPath}.${name}` : name;
    const sp = `${schemaPath}.properties[${name}]`;
    visit(child, dp, sp);
    walk(child, dp, sp, visit);
  }
  const nested: Array<[StructuralSchema | undefined, string]> = [
    [schema.items, `${schemaPath}.items`],
    [typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined, `${schemaPath}.additionalProperties`],
  ];
  for (const [child, sp] of nested) {
    if (!child) continue;
    const dp = dataPath ? `${dataPath}.*` : '*';
    visit(child, dp, sp);
    walk(child, dp, sp, visit);
  }
}

/** The gated fields and enum values a version's schema declares. Pure. */
export function schemaGates(schema: StructuralSchema): SchemaGates {
  const out: SchemaGates = { fields: [], values: [] };
  walk(schema, '', '', (node, path) => {
    const gate = node['x-plinth-feature-gate'];
    if (typeof gate === 'string' && gate) out.fields.push({ path, gate });
    for (const [value, g] of Object.entries(node['x-plinth-feature-gated-values'] ?? {})) out.values.push({ path, value, gate: g });
  });
  return out;
}

/** Every gate name the schema mentions. */
export function schemaGateNames(schema: StructuralSchema | undefined): Set<string> {
  const g = schema ? schemaGates(schema) : { fields: [], values: [] };
  return new Set([...g.fields.map((f) => f.gate), ...g.values.map((v) => v.gate)]);
}

/**
 * The extensions of one version's schema at `path`: gates must be known
 * (`known`), enum values gated must be in the node's enum, the root may not
 * be gated. Returns field errors; pure.
 */
export function validateSchemaGates(schema: StructuralSchema | undefined, path: string, known: (gate: string) => boolean): FieldError[] {
  if (!schema) return [];
  const errs: FieldError[] = [];
  if (schema['x-plinth-feature-gate'] !== undefined) errs.push(fieldErrors.forbidden(`${path}.x-plinth-feature-gate`, 'must not be set on the root schema'));
  const checkGate = (gate: unknown, p: string) => {
    if (typeof gate !== 'string' || !known(gate)) errs.push(fieldErrors.invalid(p, gate, 'unrecognized feature gate'));
  };
  walk(schema, '', path, (node, _dp, sp) => {
    if (node['x-plinth-feature-gate'] !== undefined) checkGate(node['x-plinth-feature-gate'], `${sp}.x-plinth-feature-gate`);
    for (const [value, gate] of Object.entries(node['x-plinth-feature-gated-values'] ?? {})) {
      const p = `${sp}.x-plinth-feature-gated-values[${value}]`;
      if (!(node.enum ?? []).includes(value)) errs.push(fieldErrors.invalid(p, value, 'must be one of the values in enum'));
      checkGate(gate, p);
    }
  });
  return errs;
}

function appendSentence(description: string | undefined, sentence: string): string | undefined {
  if (!sentence) return description;
  return description ? `${description} ${sentence}` : sentence;
}

/** A copy of `schema` whose gated nodes say so in their description (upstream's wording); `stage` gives a gate's stage. */
export function describeSchemaGates(schema: StructuralSchema, stage: (gate: string) => string | undefined): StructuralSchema {
  const copy = structuredClone(schema);
  walk(copy, '', '', (node) => {
    const gate = node['x-plinth-feature-gate'];
    if (typeof gate === 'string') node.description = appendSentence(node.description, gatedFieldDescription(gate, stage(gate)));
    const values = Object.entries(node['x-plinth-feature-gated-values'] ?? {}).map(([value, g]) => ({ value, gate: g }));
    if (values.length > 0) node.description = appendSentence(node.description, gatedValuesDescription(values, stage));
  });
  return copy;
}
