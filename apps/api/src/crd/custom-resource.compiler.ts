import { pruneUnknownFields } from '@plinth/apimachinery';
import type { KubeObject } from '@plinth/apimachinery';
import type { ResourceDefinition, SubresourceDefinition } from '../registry/resource-definition.js';
import { objectMetaSchema } from '../schema/object-meta.schema.js';
import type { StructuralSchema } from '@plinth/apimachinery';
import { type CrdObject, type CrdVersion, customResourceStorage, isConditionTrue } from '../kinds/customresourcedefinition/crd-types.js';
import { CustomResourceSchema } from './custom-resource-schema.js';
import { customResourceStatusStrategy, customResourceStrategy, type CustomResourceStrategyOptions } from './custom-resource.strategy.js';
import { customResourceTable } from './printer-columns.js';
import { describeSchemaGates, schemaGateNames, schemaGates } from '../kinds/customresourcedefinition/schema/schema-feature-gates.js';
import { selectableFieldGetters } from '../kinds/customresourcedefinition/selectable-fields.js';
import { apiVersionConversion, conversionWebhookOf, type CrdConversionContext, webhookConversion } from './conversion/custom-resource-conversion.js';

/**
 * Turns a stored CRD into the ResourceDefinitions of its served versions:
 * everything (schemas, CEL programs, printer columns) is compiled here,
 * once per CRD generation, never per request.
 */

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const OPEN_SCHEMA: StructuralSchema = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

/** The compiled form of one CRD. */
export interface CompiledCrd {
  /** Identifies the inputs the compilation depended on. */
  key: string;
  name: string;
  group: string;
  plural: string;
  established: boolean;
  /** Served versions (empty until the CRD is Established). */
  defs: ResourceDefinition[];
  /** Mutable: set when a newer revision of the same CRD says it is being deleted. */
  state: { terminating: boolean };
}

/** The stage of each feature gate the CRD's schemas name, sorted by name (the published descriptions depend on them). */
function gateStages(crd: CrdObject, stageOf: FeatureStageOf): Array<[string, string | null]> {
  const names = new Set((crd.spec.versions ?? []).flatMap((v) => [...schemaGateNames(v.schema?.openAPIV3Schema ?? undefined)]));
  return [...names].sort().map((g) => [g, stageOf(g) ?? null]);
}

/** The stage of a feature gate (for the descriptions of gated fields), undefined for an unknown gate. */
export type FeatureStageOf = (gate: string) => string | undefined;

/** What a compiled CRD depends on (with `stageOf`, the stages of the gates it names): a new key means recompiling. */
export function compileKey(crd: CrdObject, stageOf: FeatureStageOf = () => undefined): string {
  return JSON.stringify([crd.metadata.uid, crd.metadata.generation, isConditionTrue(crd, 'Established'), crd.status?.acceptedNames ?? null, gateStages(crd, stageOf)]);
}

function versionPriority(v: string): number {
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
  if (!m) return 0;
  const stage = m[2] === 'alpha' ? 1 : m[2] === 'beta' ? 2 : 3;
  return stage * 1e6 + Number(m[1]) * 1e3 + (m[3] ? Number(m[3]) : 0);
}

/** Upstream defaultDeprecationWarning. */
function deprecationWarning(crd: CrdObject, v: CrdVersion, kind: string): string {
  if (typeof v.deprecationWarning === 'string') return v.deprecationWarning;
  const group = crd.spec.group ?? '';
  const msg = `${group}/${v.name} ${kind} is deprecated`;
  const newer = (crd.spec.versions ?? [])
    .filter((x) => x.served && !x.deprecated && versionPriority(x.name ?? '') > versionPriority(v.name ?? ''))
    .map((x) => x.name ?? '')
    .sort((a, b) => versionPriority(b) - versionPriority(a));
  return newer.length === 0 ? msg : `${msg}; use ${group}/${newer[0]} ${kind}`;
}

/** What compiling one version shares with the others of its CRD. */
interface CompileShared {
  state: { terminating: boolean };
  stageOf: FeatureStageOf;
  /** Each version's compiled schema (served versions and the storage version). */
  schemas: Map<string, CustomResourceSchema>;
  /** How conversion webhooks are called for the CRD's tenant; undefined: strategy Webhook behaves as None (no caller configured). */
  conversion?: CrdConversionContext;
}

function kindNames(crd: CrdObject) {
  const accepted = crd.status?.acceptedNames;
  return accepted?.kind ? accepted : (crd.spec.names ?? {});
}

function compileVersion(crd: CrdObject, v: CrdVersion, shared: CompileShared): ResourceDefinition {
  const { state, stageOf } = shared;
  const group = crd.spec.group ?? '';
  const names = kindNames(crd);
  const kind = names.kind ?? '';
  const plural = crd.spec.names?.plural ?? '';
  const version = v.name ?? '';
  const schemaRoot = v.schema?.openAPIV3Schema ?? OPEN_SCHEMA;
  const schema = shared.schemas.get(version)!;
  const scalePaths = v.subresources?.scale
    ? { specReplicasPath: v.subresources.scale.specReplicasPath ?? '', statusReplicasPath: v.subresources.scale.statusReplicasPath ?? '', labelSelectorPath: v.subresources.scale.labelSelectorPath || undefined }
    : undefined;
  const opts: CustomResourceStrategyOptions = { schema, statusEnabled: !!v.subresources?.status, scale: scalePaths, terminating: () => state.terminating, plural, group, gates: schemaGates(schemaRoot) };
  const subresources: SubresourceDefinition[] = [];
  if (v.subresources?.status) subresources.push({ name: 'status', kind, group, version, verbs: ['get', 'patch', 'update'] });
  if (scalePaths) subresources.push({ name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: ['get', 'patch', 'update'] });
  const apiVersion = `${group}/${version}`;
  const storageVersion = (crd.spec.versions ?? []).find((x) => x.storage)?.name ?? version;
  const storageAPIVersion = `${group}/${storageVersion}`;
  const hook = conversionWebhookOf(crd);
  const remote =
    hook && shared.conversion
      ? webhookConversion(
          { hook, kind, listKind: names.listKind ?? `${kind}List`, servedAPIVersion: apiVersion, storageAPIVersion, storageSchema: shared.schemas.get(storageVersion) ?? schema },
          shared.conversion,
        )
      : undefined;
  return {
    group,
    version,
    resource: plural,
    singular: names.singular ?? kind.toLowerCase(),
    kind,
    listKind: names.listKind ?? `${kind}List`,
    namespaced: crd.spec.scope === 'Namespaced',
    shortNames: names.shortNames ?? [],
    categories: names.categories ?? [],
    verbs: VERBS,
    subresources,
    schema: describeSchemaGates(publishedSchema(schemaRoot), stageOf),
    strategy: customResourceStrategy(opts),
    table: customResourceTable(v.additionalPrinterColumns),
    selectableFields: selectableFieldGetters(v.selectableFields),
    storageResource: customResourceStorage(crd),
    tracksGeneration: true,
    returnDeletedObject: true,
    nameValidation: 'subdomain',
    subresourceStrategies: v.subresources?.status ? { status: customResourceStatusStrategy(opts) } : {},
    // Objects are stored in the storage version: strategy None rewrites apiVersion, Webhook calls out (custom.remote).
    conversion: remote ? undefined : apiVersionConversion(apiVersion, storageAPIVersion),
    custom: {
      decode: (obj, body, mode, warnings) => schema.decode(obj, body, mode, warnings),
      present: (obj) => present(obj, schema, apiVersion),
      deprecationWarning: v.deprecated ? deprecationWarning(crd, v, kind) : undefined,
      storageVersion,
      scale: scalePaths,
      remote,
    },
  };
}

/** The schema OpenAPI and `kubectl explain` publish: the CRD's, without its root `metadata` (ObjectMeta is added). */
function publishedSchema(schema: StructuralSchema): StructuralSchema {
  if (!schema.properties?.metadata) return schema;
  const { metadata: _m, ...rest } = schema.properties;
  return { ...schema, properties: rest };
}

/** A stored object as version `apiVersion` serves it: pruned to the schema, defaulted, apiVersion rewritten. */
function present(obj: KubeObject, schema: CustomResourceSchema, apiVersion: string): KubeObject {
  const out = pruneUnknownFields(obj, schema.schema, { objectMeta: objectMetaSchema }).pruned as KubeObject;
  schema.defaultObject(out);
  out.apiVersion = apiVersion;
  if (!out.metadata) out.metadata = {};
  if (obj.metadata?.resourceVersion !== undefined) out.metadata.resourceVersion = obj.metadata.resourceVersion;
  return out;
}

/** The compiled schemas of the served versions and the storage version. */
function versionSchemas(crd: CrdObject): Map<string, CustomResourceSchema> {
  const kind = kindNames(crd).kind ?? '';
  const schemas = new Map<string, CustomResourceSchema>();
  for (const v of crd.spec.versions ?? []) {
    if (v.served || v.storage) schemas.set(v.name ?? '', new CustomResourceSchema(v.schema?.openAPIV3Schema ?? OPEN_SCHEMA, kind, v.name ?? ''));
  }
  return schemas;
}

/**
 * Compiles `crd`; served versions only once it is Established. `stageOf`
 * describes gated fields (default: no stage known); `conversion` calls the
 * CRD's conversion webhook (strategy Webhook) for its tenant.
 */
export function compileCrd(crd: CrdObject, stageOf: FeatureStageOf = () => undefined, conversion?: CrdConversionContext): CompiledCrd {
  const state = { terminating: !!crd.metadata.deletionTimestamp };
  const established = isConditionTrue(crd, 'Established');
  const shared: CompileShared = { state, stageOf, schemas: established ? versionSchemas(crd) : new Map(), conversion };
  const defs = established ? (crd.spec.versions ?? []).filter((v) => v.served).map((v) => compileVersion(crd, v, shared)) : [];
  return {
    key: compileKey(crd, stageOf),
    name: crd.metadata.name ?? '',
    group: crd.spec.group ?? '',
    plural: crd.spec.names?.plural ?? '',
    established,
    defs,
    state,
  };
}
