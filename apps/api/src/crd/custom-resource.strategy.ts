import { isDeepStrictEqual } from 'node:util';
import { ApiError } from '@plinth/apimachinery';
import { type FieldError, fieldErrors } from '@plinth/apimachinery';
import { type KubeObject, isPlainObject } from '@plinth/apimachinery';
import { dropDisabledFields, validateGatedEnumValues } from '../features/gated-fields.js';
import type { ResourceStrategy, StrategyContext } from '../registry/resource-definition.js';
import type { CustomResourceSchema } from './custom-resource-schema.js';
import type { SchemaGates } from '../kinds/customresourcedefinition/schema/schema-feature-gates.js';

/**
 * The strategies of a custom resource version (apiextensions-apiserver
 * registry/customresource): the main resource ignores `status` when the
 * status subresource is on and bumps `metadata.generation` on any
 * non-metadata change; `/status` writes keep everything but `status`.
 * Both prune and default after mutating admission and validate with the
 * version's compiled schema.
 */

/** What the strategies need to know about their CRD version. */
export interface CustomResourceStrategyOptions {
  schema: CustomResourceSchema;
  statusEnabled: boolean;
  scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
  /** True while the CRD is being deleted: creates are refused. */
  terminating: () => boolean;
  plural: string;
  group: string;
  /** The version's gated fields and enum values (`x-plinth-feature-gate`, `x-plinth-feature-gated-values`). */
  gates: SchemaGates;
}

/** Reads a dotted JSON path (`.spec.replicas`) of an object. */
export function readPath(obj: unknown, path: string): unknown {
  let v = obj;
  for (const seg of path.replace(/^\./, '').split('.')) v = isPlainObject(v) ? v[seg] : undefined;
  return v;
}

function replicasErrors(obj: KubeObject, path: string): FieldError[] {
  const v = readPath(obj, path);
  if (v === undefined) return [];
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    return [fieldErrors.invalid(path, 0, `${path.replace(/^\./, '')} accessor error: ${JSON.stringify(v)} is of the type ${typeof v === 'number' ? 'float64' : typeof v}, expected int64`)];
  }
  if (v < 0) return [fieldErrors.invalid(path, v, 'should be a non-negative integer')];
  if (v > 2147483647) return [fieldErrors.invalid(path, v, 'should be less than or equal to 2147483647')];
  return [];
}

function scaleErrors(o: CustomResourceStrategyOptions, obj: KubeObject, spec: boolean): FieldError[] {
  if (!o.scale) return [];
  const errs = spec ? replicasErrors(obj, o.scale.specReplicasPath) : [];
  errs.push(...replicasErrors(obj, o.scale.statusReplicasPath));
  if (o.scale.labelSelectorPath) {
    const sel = readPath(obj, o.scale.labelSelectorPath);
    if (sel !== undefined && typeof sel !== 'string') errs.push(fieldErrors.invalid(o.scale.labelSelectorPath, '', `${o.scale.labelSelectorPath.replace(/^\./, '')} accessor error: ${JSON.stringify(sel)} is of the type ${typeof sel}, expected string`));
  }
  return errs;
}

function nonMetadata(o: KubeObject): Record<string, unknown> {
  const { metadata: _m, ...rest } = o;
  return rest;
}

/** Schema validation (CEL rules on the context's worker pool) plus the gated enum values (`old` undefined on create). */
async function validateObject(o: CustomResourceStrategyOptions, obj: KubeObject, old: KubeObject | undefined, ctx: StrategyContext): Promise<FieldError[]> {
  const gated = [...validateGatedEnumValues(obj, old, o.gates.values, ctx), ...scaleErrors(o, obj, true)];
  return [...(await o.schema.validate(obj, old, ctx.celRules)), ...gated];
}

/** Validation of a /status write. */
async function validateStatusUpdate(o: CustomResourceStrategyOptions, obj: KubeObject, old: KubeObject, ctx: StrategyContext): Promise<FieldError[]> {
  const gated = [...validateGatedEnumValues(obj, old, o.gates.values, ctx), ...scaleErrors(o, obj, false)];
  return [...(await o.schema.validateStatus(obj, old, ctx.celRules)), ...gated];
}

/** The main-resource strategy of a custom resource version. */
export function customResourceStrategy(o: CustomResourceStrategyOptions): ResourceStrategy {
  return {
    prepareForCreate(obj, ctx) {
      if (o.terminating()) {
        throw ApiError.methodNotAllowed(`create not allowed while custom resource definition is terminating`);
      }
      if (o.statusEnabled) delete obj.status;
      o.schema.prune(obj);
      o.schema.defaultObject(obj);
      dropDisabledFields(obj, undefined, o.gates.fields, ctx);
      obj.metadata.generation = 1;
    },
    prepareForUpdate(obj, old, ctx) {
      if (o.statusEnabled) {
        if (old.status !== undefined) obj.status = structuredClone(old.status);
        else delete obj.status;
      }
      o.schema.prune(obj);
      o.schema.defaultObject(obj);
      dropDisabledFields(obj, old, o.gates.fields, ctx);
      if (!isDeepStrictEqual(nonMetadata(obj), nonMetadata(old))) obj.metadata.generation = (old.metadata.generation ?? 0) + 1;
    },
    validate: (obj, ctx) => validateObject(o, obj, undefined, ctx),
    validateUpdate: (obj, old, ctx) => validateObject(o, obj, old, ctx),
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
  };
}

/** The `/status` strategy: only `status` of the request is kept. */
export function customResourceStatusStrategy(o: CustomResourceStrategyOptions): ResourceStrategy {
  return {
    prepareForCreate: () => undefined,
    prepareForUpdate(obj, old, ctx) {
      const hasStatus = Object.hasOwn(obj, 'status');
      const status = obj.status;
      const managedFields = obj.metadata.managedFields;
      for (const k of Object.keys(obj)) delete obj[k];
      Object.assign(obj, structuredClone(old));
      if (managedFields !== undefined) obj.metadata.managedFields = managedFields;
      if (hasStatus) obj.status = status;
      else delete obj.status;
      o.schema.prune(obj);
      o.schema.defaultObject(obj);
      dropDisabledFields(obj, old, o.gates.fields, ctx);
    },
    validate: () => [],
    validateUpdate: (obj, old, ctx) => validateStatusUpdate(o, obj, old, ctx),
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
  };
}
