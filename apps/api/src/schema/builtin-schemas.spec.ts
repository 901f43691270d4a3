import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  META_V1_NAMES,
  builtinKindSchema,
  configMapListSchema,
  configMapSchema,
  deleteOptionsSchema,
  namespaceListSchema,
  namespaceSchema,
  objectMetaSchema,
  secretListSchema,
  secretSchema,
  sharedDefinitionSchemas,
  statusSchema,
} from './builtin-schemas.js';
import type { StructuralSchema } from '@plinth/apimachinery';

function walk(schema: StructuralSchema, visit: (s: StructuralSchema, path: string) => void, path = ''): void {
  visit(schema, path);
  for (const [k, v] of Object.entries(schema.properties ?? {})) walk(v, visit, `${path}.${k}`);
  if (schema.items) walk(schema.items, visit, `${path}[]`);
  if (typeof schema.additionalProperties === 'object') walk(schema.additionalProperties, visit, `${path}{}`);
}

describe('built-in schemas', () => {
  it('documents ConfigMap.data with upstream text so kubectl explain has something to print', () => {
    const data = configMapSchema.properties?.data;
    assert.match(data?.description ?? '', /^Data contains the configuration data\. Each key must consist of alphanumeric characters/);
    assert.deepEqual(data?.additionalProperties, { type: 'string' });
    assert.equal(data?.type, 'object');
  });

  it('types ConfigMap.binaryData and Secret.data as maps of base64 bytes', () => {
    assert.deepEqual(configMapSchema.properties?.binaryData?.additionalProperties, { type: 'string', format: 'byte' });
    assert.deepEqual(secretSchema.properties?.data?.additionalProperties, { type: 'string', format: 'byte' });
    assert.deepEqual(secretSchema.properties?.stringData?.additionalProperties, { type: 'string' });
    assert.equal(secretSchema.properties?.type?.type, 'string');
    assert.equal(secretSchema.properties?.immutable?.type, 'boolean');
  });

  it('references ObjectMeta from every kind while still inlining its fields', () => {
    for (const kind of [configMapSchema, secretSchema, namespaceSchema]) {
      const metadata = kind.properties?.metadata;
      assert.equal(metadata?.['x-plinth-ref'], META_V1_NAMES.objectMeta);
      assert.match(metadata?.properties?.name?.description ?? '', /^Name must be unique within a namespace/);
      assert.match(metadata?.description ?? '', /^Standard object's metadata/);
    }
  });

  it('marks ownerReferences and finalizers for strategic merge as upstream does', () => {
    const owners = objectMetaSchema.properties?.ownerReferences;
    assert.equal(owners?.['x-kubernetes-patch-strategy'], 'merge');
    assert.equal(owners?.['x-kubernetes-patch-merge-key'], 'uid');
    assert.deepEqual(owners?.['x-kubernetes-list-map-keys'], ['uid']);
    assert.deepEqual(owners?.items?.required, ['apiVersion', 'kind', 'name', 'uid']);
    const finalizers = objectMetaSchema.properties?.finalizers;
    assert.equal(finalizers?.['x-kubernetes-patch-strategy'], 'merge');
    assert.equal(finalizers?.['x-kubernetes-list-type'], 'set');
  });

  it('types labels and annotations as maps of strings', () => {
    for (const f of ['labels', 'annotations']) {
      assert.equal(objectMetaSchema.properties?.[f]?.type, 'object');
      assert.deepEqual(objectMetaSchema.properties?.[f]?.additionalProperties, { type: 'string' });
    }
  });

  it('describes managedFields entries field by field', () => {
    const entry = objectMetaSchema.properties?.managedFields?.items;
    assert.equal(entry?.['x-plinth-ref'], META_V1_NAMES.managedFieldsEntry);
    for (const f of ['apiVersion', 'fieldsType', 'fieldsV1', 'manager', 'operation', 'subresource', 'time']) {
      assert.ok(entry?.properties?.[f]?.description, `managedFields[].${f} lacks a description`);
    }
    assert.equal(entry?.properties?.fieldsV1?.['x-kubernetes-preserve-unknown-fields'], true);
  });

  it('gives Namespace spec finalizers, a phase enum and map-keyed conditions', () => {
    assert.equal(namespaceSchema.properties?.spec?.properties?.finalizers?.items?.type, 'string');
    const status = namespaceSchema.properties?.status;
    assert.deepEqual(status?.properties?.phase?.enum, ['Active', 'Terminating']);
    const conditions = status?.properties?.conditions;
    assert.deepEqual(conditions?.['x-kubernetes-list-map-keys'], ['type']);
    assert.deepEqual(conditions?.items?.required, ['type', 'status']);
  });

  it('requires items on list kinds and references the item kind', () => {
    for (const [list, item] of [
      [configMapListSchema, 'io.k8s.api.core.v1.ConfigMap'],
      [secretListSchema, 'io.k8s.api.core.v1.Secret'],
      [namespaceListSchema, 'io.k8s.api.core.v1.Namespace'],
    ] as const) {
      assert.deepEqual(list.required, ['items']);
      assert.equal(list.properties?.items?.items?.['x-plinth-ref'], item);
      assert.equal(list.properties?.metadata?.['x-plinth-ref'], META_V1_NAMES.listMeta);
    }
  });

  it('describes every field of the built-in kinds, Status and DeleteOptions', () => {
    for (const kind of [configMapSchema, secretSchema, namespaceSchema, statusSchema, deleteOptionsSchema]) {
      walk(kind, (s, path) => {
        if (path.endsWith('[]') || path.endsWith('{}')) return;
        assert.ok(s.description && s.description.length > 10, `${kind.description} ${path} has no description`);
      });
    }
  });

  it('gives every array an item schema, which kubectl requires', () => {
    for (const [name, schema] of Object.entries(sharedDefinitionSchemas)) {
      walk(schema, (s, path) => assert.ok(s.type !== 'array' || s.items, `${name}${path} is an array without items`));
    }
  });

  it('registers a shared definition for every reference it makes', () => {
    for (const schema of Object.values(sharedDefinitionSchemas)) {
      walk(schema, (s) => {
        const ref = s['x-plinth-ref'];
        if (ref) assert.ok(sharedDefinitionSchemas[ref], `no definition for ${ref}`);
      });
    }
  });

  it('looks up built-in kinds by group, version and kind', () => {
    assert.equal(builtinKindSchema('', 'v1', 'ConfigMap'), configMapSchema);
    assert.equal(builtinKindSchema('', 'v1', 'NamespaceList'), namespaceListSchema);
    assert.equal(builtinKindSchema('autoscaling', 'v1', 'Scale')?.properties?.spec?.properties?.replicas?.format, 'int32');
    assert.equal(builtinKindSchema('apps', 'v1', 'ConfigMap'), undefined);
  });
});
