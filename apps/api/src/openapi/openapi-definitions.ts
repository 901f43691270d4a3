import type { ResourceDefinition } from '../registry/resource-definition.js';
import { compareStrings } from '@plinth/apimachinery';
import {
  META_V1_NAMES,
  builtinKindSchema,
  listSchemaOf,
  objectMetaProperty,
  sharedDefinitionSchemas,
  typeMetaProperties,
} from '../schema/builtin-schemas.js';
import type { StructuralSchema } from '@plinth/apimachinery';
import { type GroupVersionKind, definitionNameFor } from './openapi-naming.js';

/** Which OpenAPI dialect a document is rendered in. */
export type OpenApiFlavor = 'v2' | 'v3';

/** A JSON object as the builders emit it. */
export type JsonObject = Record<string, unknown>;

/** The `$ref` prefix of each dialect. */
export const REF_PREFIX: Readonly<Record<OpenApiFlavor, string>> = { v2: '#/definitions/', v3: '#/components/schemas/' };

interface Seed {
  schema: StructuralSchema;
  gvks: GroupVersionKind[];
  /** Kinds get apiVersion, kind and ObjectMeta enforced; lists get apiVersion and kind. */
  role: 'kind' | 'list' | 'shared';
}

const GVK_EXTENSION = 'x-kubernetes-group-version-kind';
const EMBEDDED_API_VERSION =
  'apiVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const EMBEDDED_KIND =
  'kind is a string value representing the type of this object. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';


function compareGvk(a: GroupVersionKind, b: GroupVersionKind): number {
  return compareStrings(a.group, b.group) || compareStrings(a.version, b.version) || compareStrings(a.kind, b.kind);
}

/** Resources in a stable order (group, version, kind, resource), so documents never depend on registration order. */
export function sortedResources(resources: ResourceDefinition[]): ResourceDefinition[] {
  return [...resources].sort((a, b) => compareGvk(a, b) || compareStrings(a.resource, b.resource));
}

function genericListSchema(def: ResourceDefinition, itemName: string): StructuralSchema {
  return listSchemaOf({
    description: `${def.listKind} is a list of ${def.kind}`,
    itemsDescription: `List of ${def.resource}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`,
    itemRef: itemName,
    itemSchema: def.schema,
  });
}

function addSeed(seeds: Map<string, Seed>, name: string, schema: StructuralSchema, gvk: GroupVersionKind | undefined, role: Seed['role']): void {
  const seed = seeds.get(name) ?? { schema, gvks: [], role };
  seeds.set(name, seed);
  if (gvk && !seed.gvks.some((g) => compareGvk(g, gvk) === 0)) seed.gvks.push(gvk);
}

function seedResources(resources: ResourceDefinition[]): Map<string, Seed> {
  const seeds = new Map<string, Seed>();
  const groupVersions = new Map<string, GroupVersionKind>([['/v1', { group: '', version: 'v1', kind: '' }]]);
  for (const def of sortedResources(resources)) {
    const gvk = { group: def.group, version: def.version, kind: def.kind };
    const name = definitionNameFor(gvk);
    addSeed(seeds, name, def.schema, gvk, 'kind');
    const listGvk = { ...gvk, kind: def.listKind };
    const listSchema = builtinKindSchema(def.group, def.version, def.listKind) ?? genericListSchema(def, name);
    addSeed(seeds, definitionNameFor(listGvk), listSchema, listGvk, 'list');
    for (const sub of def.subresources) {
      const subGvk = { group: sub.group, version: sub.version, kind: sub.kind };
      const subSchema = builtinKindSchema(sub.group, sub.version, sub.kind) ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
      addSeed(seeds, definitionNameFor(subGvk), subSchema, subGvk, 'kind');
    }
    groupVersions.set(`${def.group}/${def.version}`, { group: def.group, version: def.version, kind: '' });
  }
  addSeed(seeds, META_V1_NAMES.status, sharedDefinitionSchemas[META_V1_NAMES.status], { group: '', version: 'v1', kind: 'Status' }, 'shared');
  for (const [name, kind] of [
    [META_V1_NAMES.deleteOptions, 'DeleteOptions'],
    [META_V1_NAMES.watchEvent, 'WatchEvent'],
  ] as const) {
    for (const gv of groupVersions.values()) addSeed(seeds, name, sharedDefinitionSchemas[name], { ...gv, kind }, 'shared');
  }
  addSeed(seeds, META_V1_NAMES.patch, sharedDefinitionSchemas[META_V1_NAMES.patch], undefined, 'shared');
  return seeds;
}

/** Makes sure a kind publishes apiVersion, kind and an ObjectMeta reference, as upstream does for CRDs. */
function withKindProperties(schema: StructuralSchema, isList: boolean): StructuralSchema {
  const props = { ...(schema.properties ?? {}) };
  const typeMeta = typeMetaProperties();
  props.apiVersion ??= typeMeta.apiVersion;
  props.kind ??= typeMeta.kind;
  if (!isList && props.metadata?.['x-plinth-ref'] !== META_V1_NAMES.objectMeta) props.metadata = objectMetaProperty();
  return { ...schema, type: schema.type ?? 'object', properties: props };
}

/** The v2 restrictions of upstream's ToStructuralOpenAPIV2, applied to one node. */
function downgradeForV2(node: StructuralSchema): StructuralSchema {
  const s: StructuralSchema & Record<string, unknown> = { ...node };
  for (const k of ['allOf', 'oneOf', 'anyOf', 'not']) delete s[k];
  // kubectl breaks on untyped values that still carry items or properties.
  if (s.nullable) {
    delete s.type;
    delete s.items;
    delete s.properties;
  }
  delete s.nullable;
  if (s['x-kubernetes-preserve-unknown-fields']) {
    delete s.items;
    delete s.properties;
  }
  if (s.type === 'array' && !s.items) delete s.type;
  if (s.required && s.properties) {
    const props = s.properties;
    s.required = s.required.filter((f) => !props[f]?.nullable);
  }
  if (typeof s.additionalProperties === 'object' && s.additionalProperties.nullable) delete s.required;
  if (s.required?.length === 0) delete s.required;
  return s;
}

/** Upstream's addEmbeddedProperties for one node: embedded objects publish apiVersion, kind and ObjectMeta. */
function withEmbeddedProperties(s: StructuralSchema, flavor: OpenApiFlavor): StructuralSchema {
  if (!s['x-kubernetes-embedded-resource']) return s;
  if (flavor === 'v2' && s['x-kubernetes-preserve-unknown-fields']) return s;
  const required = [...(s.required ?? [])];
  for (const f of ['kind', 'apiVersion']) if (!required.includes(f)) required.push(f);
  return {
    ...s,
    required,
    properties: {
      ...(s.properties ?? {}),
      apiVersion: { type: 'string', description: EMBEDDED_API_VERSION },
      kind: { type: 'string', description: EMBEDDED_KIND },
      metadata: objectMetaProperty(),
    },
  };
}

class DefinitionCollector {
  readonly out = new Map<string, JsonObject>();
  private readonly queue: string[] = [];

  constructor(
    private readonly seeds: Map<string, Seed>,
    private readonly flavor: OpenApiFlavor,
  ) {
    this.queue.push(...seeds.keys());
  }

  run(): Record<string, JsonObject> {
    for (let name = this.queue.shift(); name !== undefined; name = this.queue.shift()) {
      if (this.out.has(name)) continue;
      this.out.set(name, this.renderSeed(this.seeds.get(name) as Seed));
    }
    return Object.fromEntries([...this.out.entries()].sort(([a], [b]) => compareStrings(a, b)));
  }

  private renderSeed(seed: Seed): JsonObject {
    let schema = seed.schema;
    if (seed.role === 'kind' && this.flavor === 'v2' && schema['x-kubernetes-preserve-unknown-fields']) {
      // kubectl would reject every field of an open kind if v2 listed some of them.
      schema = { type: 'object' };
    } else if (seed.role !== 'shared') {
      schema = withKindProperties(schema, seed.role === 'list');
    }
    const rendered = this.node(schema, true);
    if (seed.gvks.length > 0) {
      rendered[GVK_EXTENSION] = [...seed.gvks].sort(compareGvk).map((g) => ({ group: g.group, kind: g.kind, version: g.version }));
    }
    return rendered;
  }

  private ensure(name: string, inline: StructuralSchema): void {
    if (this.seeds.has(name)) return;
    const { description: _site, 'x-plinth-ref': _ref, ...own } = inline;
    this.seeds.set(name, { schema: sharedDefinitionSchemas[name] ?? own, gvks: [], role: 'shared' });
    this.queue.push(name);
  }

  private refSite(name: string, node: StructuralSchema): JsonObject {
    this.ensure(name, node);
    const ref = { $ref: REF_PREFIX[this.flavor] + name };
    if (node.description === undefined) return ref;
    return this.flavor === 'v2' ? { ...ref, description: node.description } : { allOf: [ref], description: node.description };
  }

  /** Renders one schema node; `top` nodes are definitions themselves, never turned into references. */
  node(input: StructuralSchema, top = false): JsonObject {
    const ref = input['x-plinth-ref'];
    if (ref !== undefined && !top) return this.refSite(ref, input);
    const s = withEmbeddedProperties(this.flavor === 'v2' ? downgradeForV2(input) : input, this.flavor);
    const out: JsonObject = {};
    for (const [key, value] of Object.entries(s)) {
      if (key === 'x-plinth-ref' || value === undefined) continue;
      if (key === 'properties') {
        out.properties = Object.fromEntries(Object.entries(value as Record<string, StructuralSchema>).map(([k, v]) => [k, this.node(v)]));
      } else if (key === 'items') {
        out.items = this.node(value as StructuralSchema);
      } else if (key === 'additionalProperties' && typeof value === 'object') {
        out.additionalProperties = this.node(value as StructuralSchema);
      } else {
        out[key] = structuredClone(value);
      }
    }
    return out;
  }
}

/**
 * All definitions a document over `resources` needs, keyed by OpenAPI name
 * in sorted order: each kind and its list (with `x-kubernetes-group-version-kind`),
 * subresource kinds, Status, DeleteOptions, WatchEvent, Patch, and every
 * definition reachable through `x-plinth-ref` (turned into `$ref`). Pure:
 * neither `resources` nor their schemas are mutated.
 */
export function buildDefinitions(resources: ResourceDefinition[], flavor: OpenApiFlavor): Record<string, JsonObject> {
  return new DefinitionCollector(seedResources(resources), flavor).run();
}

/**
 * A deep copy of `value` with every object's keys in code-point order (array
 * order kept), so that serialising it is byte-stable.
 */
export function sortKeysDeep<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => sortKeysDeep(v)) as T;
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => compareStrings(a, b));
  return Object.fromEntries(entries.map(([k, v]) => [k, sortKeysDeep(v)])) as T;
}
