import { isDeepStrictEqual } from 'node:util';
import { type FieldError, fieldErrors } from '@plinth/apimachinery';
import type { StructuralSchema } from '@plinth/apimachinery';
import { isDNS1035Label, isDNS1123Subdomain, isPlainObject } from '@plinth/apimachinery';
import { validateWebhookClientConfig } from '@plinth/admission';
import { type CrdColumn, type CrdNames, type CrdObject, type CrdSubresources, type CrdVersion, isConditionTrue } from './crd-types.js';
import { validateDefaults, validateOpenApiSchema } from './schema/openapi-schema.validation.js';
import { validateStructural } from './schema/structural.validation.js';
import { validateSelectableFields } from './selectable-fields.js';

/**
 * Static validation of a CustomResourceDefinition
 * (apiextensions-apiserver validation.ValidateCustomResourceDefinition),
 * with upstream's field paths: because upstream converts v1 CRDs to its
 * internal form first, schemas, subresources and printer columns that are
 * identical in every version are reported at `spec.validation…`,
 * `spec.subresources…` and `spec.additionalPrinterColumns…`. Pure.
 */

const COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];
const ROOT_ALLOWED_WITH_STATUS = new Set([
  'description', 'type', 'format', 'title', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'maxLength', 'minLength', 'pattern',
  'maxItems', 'minItems', 'uniqueItems', 'multipleOf', 'required', 'items', 'properties', 'externalDocs', 'example',
  'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-validations',
]);
const ROOT_ALLOWED_TEXT =
  '[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations]';

function dns1035(p: string, v: string | undefined, errs: FieldError[], mixedCase = false): void {
  if (!v) return;
  const e = isDNS1035Label(mixedCase ? v.toLowerCase() : v);
  if (e.length > 0) errs.push(fieldErrors.invalid(p, v, mixedCase ? `may have mixed case, but should otherwise match: ${e.join(',')}` : e.join(',')));
}

/** Upstream ValidateCustomResourceDefinitionNames (used for spec.names and status.acceptedNames). */
export function validateNames(names: CrdNames | undefined, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const n = names ?? {};
  dns1035(`${p}.plural`, n.plural, errs);
  dns1035(`${p}.singular`, n.singular, errs);
  dns1035(`${p}.kind`, n.kind, errs, true);
  dns1035(`${p}.listKind`, n.listKind, errs, true);
  (n.shortNames ?? []).forEach((s, i) => dns1035(`${p}.shortNames[${i}]`, s || ' ', errs));
  if (n.kind && n.kind === n.listKind) errs.push(fieldErrors.invalid(`${p}.listKind`, n.listKind, 'kind and listKind may not be the same'));
  (n.categories ?? []).forEach((c, i) => dns1035(`${p}.categories[${i}]`, c || ' ', errs));
  return errs;
}

function simpleJsonPath(s: string, p: string): FieldError[] {
  if (s.length === 0) return [fieldErrors.invalid(p, s, 'must not be empty')];
  if (s[0] !== '.') return [fieldErrors.invalid(p, s, 'must be a simple json path starting with .')];
  return [];
}

function validateColumn(c: CrdColumn, p: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!c.name) errs.push(fieldErrors.required(`${p}.name`));
  if (!c.type) errs.push(fieldErrors.required(`${p}.type`, `must be one of ${COLUMN_TYPES.join(',')}`));
  else if (!COLUMN_TYPES.includes(c.type)) errs.push(fieldErrors.invalid(`${p}.type`, c.type, `must be one of ${COLUMN_TYPES.join(',')}`));
  if (c.format && !COLUMN_FORMATS.includes(c.format)) errs.push(fieldErrors.invalid(`${p}.format`, c.format, `must be one of ${COLUMN_FORMATS.join(',')}`));
  if (!c.jsonPath) errs.push(fieldErrors.required(`${p}.JSONPath`));
  else errs.push(...simpleJsonPath(c.jsonPath, `${p}.JSONPath`));
  return errs;
}

function validateSubresources(s: CrdSubresources | null | undefined, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const scale = s?.scale;
  if (!scale) return errs;
  const path = (field: string, prefixes: string[], msg: string, value: string | undefined, required: boolean) => {
    if (!value) {
      if (required) errs.push(fieldErrors.required(`${p}.scale.${field}`));
      return;
    }
    const e = simpleJsonPath(value, `${p}.scale.${field}`);
    if (e.length > 0) errs.push(...e);
    else if (!prefixes.some((x) => value.startsWith(x))) errs.push(fieldErrors.invalid(`${p}.scale.${field}`, value, msg));
  };
  path('specReplicasPath', ['.spec.'], 'should be a json path under .spec', scale.specReplicasPath, true);
  path('statusReplicasPath', ['.status.'], 'should be a json path under .status', scale.statusReplicasPath, true);
  path('labelSelectorPath', ['.spec.', '.status.'], 'should be a json path under either .spec or .status', scale.labelSelectorPath, false);
  return errs;
}

function validateSchema(schema: StructuralSchema | null | undefined, statusEnabled: boolean, p: string, unchanged: boolean): FieldError[] {
  if (!schema) return [];
  const errs: FieldError[] = [];
  const sp = `${p}.openAPIV3Schema`;
  if (statusEnabled) {
    if (schema.type !== undefined && schema.type !== 'object') {
      errs.push(fieldErrors.invalid(`${sp}.type`, schema.type, 'only "object" is allowed as the type at the root of the schema if the status subresource is enabled'));
    } else if (Object.keys(schema).some((k) => !ROOT_ALLOWED_WITH_STATUS.has(k) && (schema as Record<string, unknown>)[k] !== undefined)) {
      errs.push(fieldErrors.invalid(sp, schema, `only ${ROOT_ALLOWED_TEXT} fields are allowed at the root of the schema if the status subresource is enabled`));
    }
  }
  if (schema.nullable) errs.push(fieldErrors.forbidden(`${sp}.nullable`, 'nullable cannot be true at the root'));
  const structural = validateStructural(schema, sp);
  errs.push(...structural);
  if (structural.length === 0) errs.push(...validateDefaults(schema, sp));
  errs.push(...validateOpenApiSchema(schema, sp, true, { suppressPerExpressionCost: unchanged }));
  return errs;
}

function allIdentical<T>(versions: CrdVersion[], get: (v: CrdVersion) => T | null | undefined): boolean {
  if (versions.length === 0) return false;
  const first = get(versions[0]);
  return versions.every((v) => {
    const x = get(v);
    return x !== undefined && x !== null && !(Array.isArray(x) && x.length === 0) && isDeepStrictEqual(x, first);
  });
}

function validateVersions(crd: CrdObject, errs: FieldError[], unchangedSchemas: ReadonlySet<string>): void {
  const versions = crd.spec.versions ?? [];
  const hoistSchema = allIdentical(versions, (v) => v.schema);
  const hoistSub = allIdentical(versions, (v) => v.subresources);
  const hoistCols = allIdentical(versions, (v) => v.additionalPrinterColumns);
  let storage = 0;
  const names = new Set<string>();
  let unique = true;
  versions.forEach((v, i) => {
    const vp = `spec.versions[${i}]`;
    if (v.storage) storage++;
    if (names.has(v.name ?? '')) unique = false;
    names.add(v.name ?? '');
    const e = isDNS1035Label(v.name ?? '');
    if (e.length > 0) errs.push(fieldErrors.invalid(`${vp}.name`, v.name ?? '', e.join(',')));
    if (!v.deprecated && v.deprecationWarning !== undefined && v.deprecationWarning !== null) errs.push(fieldErrors.invalid(`${vp}.deprecationWarning`, v.deprecationWarning, 'can only be set for deprecated versions'));
    else if (typeof v.deprecationWarning === 'string') {
      if (v.deprecationWarning.length > 256) errs.push(fieldErrors.invalid(`${vp}.deprecationWarning`, v.deprecationWarning, 'must be <= 256 characters long'));
      if (v.deprecationWarning.length === 0) errs.push(fieldErrors.invalid(`${vp}.deprecationWarning`, v.deprecationWarning, 'must not be an empty string'));
    }
    if (!hoistSchema) errs.push(...validateSchema(v.schema?.openAPIV3Schema, !!v.subresources?.status, `${vp}.schema`, unchangedSchemas.has(v.name ?? '')));
    if (!hoistSub) errs.push(...validateSubresources(v.subresources, `${vp}.subresources`));
    if (!hoistCols) (v.additionalPrinterColumns ?? []).forEach((c, j) => errs.push(...validateColumn(c, `${vp}.additionalPrinterColumns[${j}]`)));
    if ((v.selectableFields ?? []).length > 0) {
      const schema = v.schema?.openAPIV3Schema;
      if (!schema) errs.push(fieldErrors.invalid(`${vp}.selectableFields`, '', 'selectableFields may only be set when version.schema.openAPIV3Schema is not included'));
      else errs.push(...validateSelectableFields(v.selectableFields ?? [], schema, `${vp}.selectableFields`));
    }
    if (v.served && !v.schema?.openAPIV3Schema && !crd.spec.preserveUnknownFields) errs.push(fieldErrors.required(`${vp}.schema.openAPIV3Schema`, 'schemas are required'));
  });
  if (!unique) errs.push(fieldErrors.invalid('spec.versions', versions, 'must contain unique version names'));
  if (storage !== 1) errs.push(fieldErrors.invalid('spec.versions', versions, 'must have exactly one version marked as storage version'));
  if (versions.length === 0) errs.push(fieldErrors.required('spec.versions'));
  if (hoistSchema) errs.push(...validateSchema(versions[0].schema?.openAPIV3Schema, versions.some((v) => !!v.subresources?.status), 'spec.validation', unchangedSchemas.has(versions[0].name ?? '')));
  if (hoistSub) errs.push(...validateSubresources(versions[0].subresources, 'spec.subresources'));
  if (hoistCols) (versions[0].additionalPrinterColumns ?? []).forEach((c, j) => errs.push(...validateColumn(c, `spec.additionalPrinterColumns[${j}]`)));
}

const ACCEPTED_REVIEW_VERSIONS = ['v1', 'v1beta1'];

/** upstream validateConversionReviewVersions (internal path spec.conversion.conversionReviewVersions). */
function validateReviewVersions(versions: unknown, requireRecognized: boolean): FieldError[] {
  const p = 'spec.conversion.conversionReviewVersions';
  const list = Array.isArray(versions) ? versions.map((v) => String(v)) : [];
  if (list.length === 0) return [fieldErrors.required(p, '')];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  list.forEach((v, i) => {
    if (seen.has(v)) {
      errs.push(fieldErrors.invalid(`${p}[${i}]`, v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const e of isDNS1035Label(v)) errs.push(fieldErrors.invalid(`${p}[${i}]`, v, e));
  });
  if (requireRecognized && !list.some((v) => ACCEPTED_REVIEW_VERSIONS.includes(v))) {
    errs.push(fieldErrors.invalid(p, list, `must include at least one of ${ACCEPTED_REVIEW_VERSIONS.join(', ')}`));
  }
  return errs;
}

/** Whether a stored CRD's conversion webhook names a ConversionReview version Plinth speaks, or none (upstream hasValidConversionReviewVersionOrEmpty). */
function hasRecognizedReviewVersion(crd: CrdObject): boolean {
  const w = crd.spec.conversion?.webhook;
  const versions = isPlainObject(w) && Array.isArray(w.conversionReviewVersions) ? w.conversionReviewVersions : [];
  return versions.length === 0 || versions.some((v) => ACCEPTED_REVIEW_VERSIONS.includes(String(v)));
}

/**
 * upstream validateCustomResourceConversion, with its internal paths
 * (`spec.conversion.webhookClientConfig…`, as upstream reports them after
 * converting a v1 CRD to its internal form).
 */
function validateConversion(crd: CrdObject, requireRecognizedReviewVersion: boolean): FieldError[] {
  const conv = crd.spec.conversion;
  if (!conv) return [];
  if (!conv.strategy) return [fieldErrors.required('spec.conversion.strategy')];
  if (conv.strategy !== 'None' && conv.strategy !== 'Webhook') return [fieldErrors.notSupported('spec.conversion.strategy', conv.strategy, ['None', 'Webhook'])];
  const webhook = isPlainObject(conv.webhook) ? conv.webhook : undefined;
  const clientConfig = webhook?.clientConfig;
  const errs: FieldError[] = [];
  if (conv.strategy === 'Webhook') {
    if (!isPlainObject(clientConfig)) errs.push(fieldErrors.required('spec.conversion.webhookClientConfig', 'required when strategy is set to Webhook'));
    else errs.push(...validateWebhookClientConfig(clientConfig, 'spec.conversion.webhookClientConfig'));
    errs.push(...validateReviewVersions(webhook?.conversionReviewVersions, requireRecognizedReviewVersion));
    return errs;
  }
  if (isPlainObject(clientConfig)) errs.push(fieldErrors.forbidden('spec.conversion.webhookClientConfig', 'should not be set when strategy is not set to Webhook'));
  if (Array.isArray(webhook?.conversionReviewVersions) && webhook.conversionReviewVersions.length > 0) {
    errs.push(fieldErrors.forbidden('spec.conversion.conversionReviewVersions', 'should not be set when strategy is not set to Webhook'));
  }
  return errs;
}

/**
 * Upstream validateCustomResourceDefinitionSpec plus metadata.name and
 * status checks. `requireRecognizedReviewVersion` is false on updates of a
 * CRD whose webhook already named no known ConversionReview version;
 * `unchangedSchemas` names the versions an update leaves their schema
 * (their rules are not held to the per-rule cost limit again, as upstream).
 */
export function validateCrd(crd: CrdObject, requireRecognizedReviewVersion = true, unchangedSchemas: ReadonlySet<string> = new Set()): FieldError[] {
  const errs: FieldError[] = [];
  const { spec } = crd;
  const plural = spec.names?.plural ?? '';
  if (crd.metadata.name && crd.metadata.name !== `${plural}.${spec.group ?? ''}`) {
    errs.push(fieldErrors.invalid('metadata.name', crd.metadata.name, 'must be spec.names.plural+"."+spec.group'));
  }
  if (!spec.group) errs.push(fieldErrors.required('spec.group'));
  else {
    const e = isDNS1123Subdomain(spec.group);
    if (e.length > 0) errs.push(fieldErrors.invalid('spec.group', spec.group, e.join(',')));
    else if (spec.group.split('.').length < 2) errs.push(fieldErrors.invalid('spec.group', spec.group, 'should be a domain with at least one dot'));
  }
  if (!spec.scope) errs.push(fieldErrors.required('spec.scope'));
  else if (spec.scope !== 'Cluster' && spec.scope !== 'Namespaced') errs.push(fieldErrors.notSupported('spec.scope', spec.scope, ['Cluster', 'Namespaced']));
  if (spec.preserveUnknownFields) errs.push(fieldErrors.invalid('spec.preserveUnknownFields', true, 'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead'));
  validateVersions(crd, errs, unchangedSchemas);
  for (const f of ['plural', 'singular', 'kind', 'listKind'] as const) if (!spec.names?.[f]) errs.push(fieldErrors.required(`spec.names.${f}`));
  errs.push(...validateNames(spec.names, 'spec.names'));
  errs.push(...validateConversion(crd, requireRecognizedReviewVersion));
  errs.push(...validateNames(crd.status?.acceptedNames, 'status.acceptedNames'));
  errs.push(...validateStoredVersions(crd));
  return errs;
}

function validateStoredVersions(crd: CrdObject): FieldError[] {
  const stored = crd.status?.storedVersions ?? [];
  if (stored.length === 0) return [fieldErrors.invalid('status.storedVersions', stored, 'must have at least one stored version')];
  const errs: FieldError[] = [];
  const left = new Map(stored.map((v, i) => [v, i]));
  for (const v of crd.spec.versions ?? []) {
    if (v.storage && !left.has(v.name ?? '')) errs.push(fieldErrors.invalid('status.storedVersions', stored, `must have the storage version ${v.name}`));
    left.delete(v.name ?? '');
  }
  for (const [v, i] of left) errs.push(fieldErrors.invalid(`status.storedVersions[${i}]`, v, 'must appear in spec.versions'));
  return errs;
}

/** The versions of `crd` whose schema is the same as in `old` (upstream findVersionsWithUnchangedSchemas). */
function versionsWithUnchangedSchemas(crd: CrdObject, old: CrdObject): Set<string> {
  const out = new Set<string>();
  const oldSchemas = new Map((old.spec.versions ?? []).map((v) => [v.name ?? '', v.schema?.openAPIV3Schema]));
  for (const v of crd.spec.versions ?? []) {
    const name = v.name ?? '';
    if (oldSchemas.has(name) && isDeepStrictEqual(v.schema?.openAPIV3Schema, oldSchemas.get(name))) out.add(name);
  }
  return out;
}

/** Update rules on top of {@link validateCrd}: group and plural never change; scope and kind not once established. */
export function validateCrdUpdate(crd: CrdObject, old: CrdObject): FieldError[] {
  const oldWebhook = old.spec.conversion?.strategy === 'Webhook';
  const errs = validateCrd(crd, !oldWebhook || hasRecognizedReviewVersion(old), versionsWithUnchangedSchemas(crd, old));
  const immutable = (p: string, a: unknown, b: unknown) => {
    if (a !== b) errs.push(fieldErrors.invalid(p, a, 'field is immutable'));
  };
  if (isConditionTrue(old, 'Established')) {
    immutable('spec.scope', crd.spec.scope, old.spec.scope);
    immutable('spec.names.kind', crd.spec.names?.kind, old.spec.names?.kind);
  }
  immutable('spec.group', crd.spec.group, old.spec.group);
  immutable('spec.names.plural', crd.spec.names?.plural, old.spec.names?.plural);
  return errs;
}
