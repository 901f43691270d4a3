import { isPlainObject, type KubeObject, type StructuralSchema } from '@plinth/apimachinery';
import { type CelObjectTypes, checkCelTyped } from '@plinth/cel';

/**
 * status.typeChecking of a ValidatingAdmissionPolicy, as upstream's
 * TypeChecker: every validation expression and messageExpression is checked
 * with `object` and `oldObject` typed by the schema of each kind the
 * policy's rules name exactly (no wildcards; at most 10 kinds), and every
 * error becomes an ExpressionWarning (`spec.validations[0].expression`:
 * `/v1, Kind=ConfigMap: ERROR: <input>:1:17: undefined field 'x'`).
 * `params` is typed by the schema of the policy's paramKind when the
 * tenant serves it, and `dyn` otherwise, as upstream.
 */

/** A kind to check against: its group/version/kind and schema. */
export interface TypedKind {
  group: string;
  version: string;
  kind: string;
  schema: StructuralSchema;
}

/** An ExpressionWarning of status.typeChecking. */
export interface ExpressionWarning {
  fieldRef: string;
  warning: string;
}

const MAX_TYPES = 10;

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** The kinds named exactly by the policy's resourceRules, resolved by `lookup`, sorted and unique. */
function typesToCheck(spec: Record<string, unknown>, lookup: (group: string, version: string, resource: string) => TypedKind | undefined): TypedKind[] {
  const mc = isPlainObject(spec.matchConstraints) ? spec.matchConstraints : {};
  const rules = Array.isArray(mc.resourceRules) ? mc.resourceRules.filter(isPlainObject) : [];
  const found = new Map<string, TypedKind>();
  for (const rule of rules) {
    const groups = strings(rule.apiGroups);
    const versions = strings(rule.apiVersions);
    const resources = strings(rule.resources).filter((r) => !r.includes('/'));
    if (groups.includes('*') || versions.includes('*') || resources.includes('*')) continue;
    for (const g of [...groups].sort()) {
      for (const v of [...versions].sort()) {
        for (const r of [...resources].sort()) {
          const t = lookup(g, v, r);
          if (t) found.set(`${t.group}/${t.version}/${t.kind}`, t);
          if (found.size >= MAX_TYPES) return [...found.values()];
        }
      }
    }
  }
  return [...found.values()].sort((a, b) => (`${a.group}/${a.version}/${a.kind}` < `${b.group}/${b.version}/${b.kind}` ? -1 : 1));
}

/** The CEL type of a schema node; object types are added to `types` (children first) under `name`. */
function celType(schema: StructuralSchema | undefined, name: string, types: CelObjectTypes): string {
  if (!schema || schema['x-kubernetes-preserve-unknown-fields'] || schema['x-kubernetes-int-or-string']) return 'dyn';
  switch (schema.type) {
    case 'string':
      return 'string';
    case 'integer':
      return 'int';
    case 'number':
      return 'double';
    case 'boolean':
      return 'bool';
    case 'array':
      return `list<${celType(schema.items, `${name}.@items`, types)}>`;
    case 'object': {
      if (schema.properties && Object.keys(schema.properties).length > 0) {
        const fields: Record<string, string> = {};
        for (const [k, v] of Object.entries(schema.properties)) fields[k] = celType(v, `${name}.${k}`, types);
        types[name] = fields;
        return name;
      }
      if (typeof schema.additionalProperties === 'object') return `map<string, ${celType(schema.additionalProperties, `${name}.@values`, types)}>`;
      return 'dyn';
    }
    default:
      return 'dyn';
  }
}

function gvkString(t: TypedKind): string {
  return `${t.group}/${t.version}, Kind=${t.kind}`;
}

function checkAgainst(expression: string, kinds: Array<{ kind: TypedKind; vars: Record<string, string>; types: CelObjectTypes }>): string {
  const messages: string[] = [];
  for (const k of kinds) {
    const err = checkCelTyped(expression, k.vars, k.types);
    if (err) messages.push(`${gvkString(k.kind)}: ${err}\n`);
  }
  return messages.join('\n');
}

/** How type checking finds kinds: by the resource a rule names, and by the kind paramKind names. */
export interface TypedKindLookup {
  byResource(group: string, version: string, resource: string): TypedKind | undefined;
  byKind(group: string, version: string, kind: string): TypedKind | undefined;
}

/** The kind spec.paramKind names (`apiVersion` group/version or a bare core version), when it is served. */
function paramsKind(spec: Record<string, unknown>, lookup: TypedKindLookup): TypedKind | undefined {
  const pk = isPlainObject(spec.paramKind) ? spec.paramKind : undefined;
  if (!pk || typeof pk.apiVersion !== 'string' || typeof pk.kind !== 'string' || pk.kind === '') return undefined;
  const parts = pk.apiVersion.split('/');
  if (parts.length > 2 || parts.some((p) => p === '')) return undefined;
  const [group, version] = parts.length === 2 ? parts : ['', parts[0]];
  return lookup.byKind(group, version, pk.kind);
}

/** The type-checking warnings of a ValidatingAdmissionPolicy (empty: none, or nothing to check against). Pure. */
export function typeCheckPolicy(policy: KubeObject, lookup: TypedKindLookup): ExpressionWarning[] {
  const spec = isPlainObject(policy.spec) ? policy.spec : {};
  const params = paramsKind(spec, lookup);
  const kinds = typesToCheck(spec, (g, v, r) => lookup.byResource(g, v, r)).map((kind) => {
    const types: CelObjectTypes = {};
    const objectType = celType(kind.schema, 'Object', types);
    // Object types are named by their path; the params' own prefix keeps them apart from the object's.
    const paramsType = params ? celType(params.schema, 'Params', types) : 'dyn';
    const vars = { object: objectType, oldObject: objectType, request: 'dyn', params: paramsType, namespaceObject: 'dyn', variables: 'dyn', authorizer: 'dyn' };
    return { kind, vars, types };
  });
  if (kinds.length === 0) return [];
  const warnings: ExpressionWarning[] = [];
  const validations = Array.isArray(spec.validations) ? spec.validations : [];
  validations.forEach((v, i) => {
    if (!isPlainObject(v)) return;
    for (const field of ['expression', 'messageExpression']) {
      const src = v[field];
      if (typeof src !== 'string' || src === '') continue;
      const warning = checkAgainst(src, kinds);
      if (warning) warnings.push({ fieldRef: `spec.validations[${i}].${field}`, warning });
    }
  });
  return warnings;
}
