import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configMapResource } from '../kinds/configmap/configmap.resource.js';
import type { ResourceDefinition } from '../registry/resource-definition.js';
import { configMapSchema, namespaceSchema } from '../schema/builtin-schemas.js';
import type { StructuralSchema } from '@plinth/apimachinery';
import { buildOpenApiV2 } from './openapi-v2.builder.js';

type Json = Record<string, any>;

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** The real ConfigMap definition with `overrides`: builders only read its declarative parts. */
function fakeResource(overrides: Partial<ResourceDefinition>): ResourceDefinition {
  return { ...configMapResource, storageResource: '/configmaps', ...overrides };
}

const cronTabSchema: StructuralSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['cronSpec', 'maybe'],
      properties: {
        cronSpec: { type: 'string', description: 'cron spec' },
        maybe: { type: 'string', nullable: true },
        loose: { type: 'array' },
        blob: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { a: { type: 'string' } } },
      },
    },
  },
};

const configMaps = fakeResource({});
const namespaces = fakeResource({
  resource: 'namespaces',
  singular: 'namespace',
  kind: 'Namespace',
  listKind: 'NamespaceList',
  namespaced: false,
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  schema: namespaceSchema,
  subresources: [
    { name: 'finalize', kind: 'Namespace', group: '', version: 'v1', verbs: ['update'] },
    { name: 'status', kind: 'Namespace', group: '', version: 'v1', verbs: ['get', 'patch', 'update'] },
  ],
});
const cronTabs = fakeResource({
  group: 'stable.example.com',
  resource: 'crontabs',
  singular: 'crontab',
  kind: 'CronTab',
  listKind: 'CronTabList',
  schema: cronTabSchema,
  subresources: [{ name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: ['get', 'patch', 'update'] }],
});

const doc = buildOpenApiV2([configMaps, namespaces, cronTabs], { title: 'Kubernetes', version: 'v1.31.0' }) as Json;

function collectRefs(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => collectRefs(v, out));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else collectRefs(v, out);
    }
  }
  return out;
}

describe('buildOpenApiV2', () => {
  it('produces a Swagger 2.0 document with the given info', () => {
    assert.equal(doc.swagger, '2.0');
    assert.deepEqual(doc.info, { title: 'Kubernetes', version: 'v1.31.0' });
  });

  it('names definitions REST-friendly and tags kinds and lists with their GVK', () => {
    assert.deepEqual(doc.definitions['io.k8s.api.core.v1.ConfigMap']['x-kubernetes-group-version-kind'], [{ group: '', kind: 'ConfigMap', version: 'v1' }]);
    assert.deepEqual(doc.definitions['io.k8s.api.core.v1.ConfigMapList']['x-kubernetes-group-version-kind'], [{ group: '', kind: 'ConfigMapList', version: 'v1' }]);
    assert.deepEqual(doc.definitions['com.example.stable.v1.CronTab']['x-kubernetes-group-version-kind'], [
      { group: 'stable.example.com', kind: 'CronTab', version: 'v1' },
    ]);
    const list = doc.definitions['com.example.stable.v1.CronTabList'];
    assert.deepEqual(list.required, ['items']);
    assert.deepEqual(list.properties.items.items, { $ref: '#/definitions/com.example.stable.v1.CronTab' });
    assert.equal(list.description, 'CronTabList is a list of CronTab');
  });

  it('references ObjectMeta instead of inlining it, keeping the field description', () => {
    const metadata = doc.definitions['io.k8s.api.core.v1.ConfigMap'].properties.metadata;
    assert.equal(metadata.$ref, '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
    assert.match(metadata.description, /^Standard object's metadata/);
    assert.equal(metadata.properties, undefined);
    assert.match(doc.definitions['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'].description, /^ObjectMeta is metadata/);
  });

  it('adds apiVersion, kind and an ObjectMeta reference to custom kinds', () => {
    const props = doc.definitions['com.example.stable.v1.CronTab'].properties;
    assert.equal(props.metadata.$ref, '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
    assert.equal(props.apiVersion.type, 'string');
    assert.equal(props.kind.type, 'string');
  });

  it('keeps patch strategy extensions for client-side apply', () => {
    const owners = doc.definitions['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'].properties.ownerReferences;
    assert.equal(owners['x-kubernetes-patch-strategy'], 'merge');
    assert.equal(owners['x-kubernetes-patch-merge-key'], 'uid');
    assert.deepEqual(owners.items, { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference' });
  });

  it('resolves every $ref and leaves no x-plinth-ref behind', () => {
    for (const ref of collectRefs(doc)) {
      assert.ok(ref.startsWith('#/definitions/'), ref);
      assert.ok(doc.definitions[ref.slice('#/definitions/'.length)], `dangling ${ref}`);
    }
    assert.equal(JSON.stringify(doc).includes('x-plinth-ref'), false);
  });

  it('applies the v2 restrictions to custom schemas', () => {
    const spec = doc.definitions['com.example.stable.v1.CronTab'].properties.spec;
    assert.deepEqual(spec.properties.maybe, {});
    assert.deepEqual(spec.required, ['cronSpec']);
    assert.deepEqual(spec.properties.loose, {});
    assert.equal(spec.properties.blob.properties, undefined);
    assert.equal(spec.properties.blob['x-kubernetes-preserve-unknown-fields'], true);
  });

  it('publishes an open custom kind as a bare object', () => {
    const open = fakeResource({ group: 'x.io', kind: 'Open', listKind: 'OpenList', resource: 'opens', schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } });
    const d = buildOpenApiV2([open], { title: 't', version: 'v' }) as Json;
    assert.deepEqual(d.definitions['io.x.v1.Open'], { type: 'object', 'x-kubernetes-group-version-kind': [{ group: 'x.io', kind: 'Open', version: 'v1' }] });
  });

  it('emits collection, item, all-namespaces and watch paths with upstream operation IDs', () => {
    const ids = (path: string) => Object.values(doc.paths[path] ?? {}).map((op: any) => op.operationId).filter(Boolean).sort();
    assert.deepEqual(ids('/api/v1/namespaces/{namespace}/configmaps'), [
      'createCoreV1NamespacedConfigMap',
      'deleteCoreV1CollectionNamespacedConfigMap',
      'listCoreV1NamespacedConfigMap',
    ]);
    assert.deepEqual(ids('/api/v1/namespaces/{namespace}/configmaps/{name}'), [
      'deleteCoreV1NamespacedConfigMap',
      'patchCoreV1NamespacedConfigMap',
      'readCoreV1NamespacedConfigMap',
      'replaceCoreV1NamespacedConfigMap',
    ]);
    assert.deepEqual(ids('/api/v1/configmaps'), ['listCoreV1ConfigMapForAllNamespaces']);
    assert.deepEqual(ids('/api/v1/watch/namespaces/{namespace}/configmaps'), ['watchCoreV1NamespacedConfigMapList']);
    assert.deepEqual(ids('/api/v1/watch/configmaps'), ['watchCoreV1ConfigMapListForAllNamespaces']);
    assert.deepEqual(ids('/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}'), [
      'deleteStableExampleComV1NamespacedCronTab',
      'patchStableExampleComV1NamespacedCronTab',
      'readStableExampleComV1NamespacedCronTab',
      'replaceStableExampleComV1NamespacedCronTab',
    ]);
  });

  it('serves cluster-scoped kinds without a namespace and with their subresources', () => {
    const item = doc.paths['/api/v1/namespaces/{name}'];
    assert.equal(item.get.operationId, 'readCoreV1Namespace');
    assert.deepEqual(item.parameters.map((p: Json) => p.name), ['name', 'pretty']);
    assert.equal(doc.paths['/api/v1/namespaces/{name}/status'].patch.operationId, 'patchCoreV1NamespaceStatus');
    assert.deepEqual(Object.keys(doc.paths['/api/v1/namespaces/{name}/finalize']).sort(), ['parameters', 'put']);
    assert.equal(doc.paths['/api/v1/namespaces/{name}/finalize'].put.operationId, 'replaceCoreV1NamespaceFinalize');
    assert.equal(doc.paths['/api/v1/namespaces'].delete, undefined);
  });

  it('types the scale subresource as autoscaling/v1 Scale', () => {
    const scale = doc.paths['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/scale'];
    assert.equal(scale.get.operationId, 'readStableExampleComV1NamespacedCronTabScale');
    assert.deepEqual(scale.get['x-kubernetes-group-version-kind'], { group: 'autoscaling', kind: 'Scale', version: 'v1' });
    assert.equal(scale.get.responses['200'].schema.$ref, '#/definitions/io.k8s.api.autoscaling.v1.Scale');
  });

  it('marks operations with their action and GVK', () => {
    const item = doc.paths['/api/v1/namespaces/{namespace}/configmaps/{name}'];
    assert.equal(item.get['x-kubernetes-action'], 'get');
    assert.equal(item.put['x-kubernetes-action'], 'put');
    assert.equal(item.delete['x-kubernetes-action'], 'delete');
    assert.deepEqual(item.patch['x-kubernetes-group-version-kind'], { group: '', kind: 'ConfigMap', version: 'v1' });
    const coll = doc.paths['/api/v1/namespaces/{namespace}/configmaps'];
    assert.equal(coll.post['x-kubernetes-action'], 'post');
    assert.equal(coll.delete['x-kubernetes-action'], 'deletecollection');
    assert.equal(doc.paths['/api/v1/watch/configmaps'].get['x-kubernetes-action'], 'watchlist');
    assert.equal(doc.paths['/api/v1/watch/namespaces/{namespace}/configmaps/{name}'].get['x-kubernetes-action'], 'watch');
  });

  it('types DELETE answers as Status, or as the object when the store returns it', () => {
    const del = doc.paths['/api/v1/namespaces/{namespace}/configmaps/{name}'].delete;
    assert.equal(del.responses['200'].schema.$ref, '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Status');
    assert.equal(del.responses['202'].schema.$ref, '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Status');
    const d = buildOpenApiV2([{ ...cronTabs, returnDeletedObject: true }], { title: 't', version: 'v' }) as Json;
    const crDel = d.paths['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}'].delete;
    assert.equal(crDel.responses['200'].schema.$ref, '#/definitions/com.example.stable.v1.CronTab');
    assert.equal(d.paths['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs'].delete.responses['200'].schema.$ref, '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Status');
  });

  it('gives patches the patch media types and writes fieldValidation', () => {
    const patch = doc.paths['/api/v1/namespaces/{namespace}/configmaps/{name}'].patch;
    assert.deepEqual(patch.consumes, [
      'application/json-patch+json',
      'application/merge-patch+json',
      'application/strategic-merge-patch+json',
      'application/apply-patch+yaml',
    ]);
    assert.deepEqual(patch.parameters.map((p: Json) => p.name), ['body', 'dryRun', 'fieldManager', 'fieldValidation', 'force']);
    assert.equal(patch.parameters[0].schema.$ref, '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch');
    const crPatch = doc.paths['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}'].patch;
    assert.equal(crPatch.consumes.includes('application/strategic-merge-patch+json'), false);
    const post = doc.paths['/api/v1/namespaces/{namespace}/configmaps'].post;
    assert.ok(post.parameters.some((p: Json) => p.name === 'fieldValidation' && p.in === 'query'));
  });

  it('lists the list and watch query parameters on list operations', () => {
    const list = doc.paths['/api/v1/namespaces/{namespace}/configmaps'].get;
    assert.deepEqual(
      list.parameters.map((p: Json) => p.name),
      ['allowWatchBookmarks', 'continue', 'fieldSelector', 'labelSelector', 'limit', 'resourceVersion', 'resourceVersionMatch', 'sendInitialEvents', 'timeoutSeconds', 'watch'],
    );
    assert.ok(list.produces.includes('application/json;stream=watch'));
    assert.equal(list.responses['200'].schema.$ref, '#/definitions/io.k8s.api.core.v1.ConfigMapList');
  });

  it('is byte-identical whatever the order of the resources', () => {
    const again = buildOpenApiV2([cronTabs, namespaces, configMaps], { title: 'Kubernetes', version: 'v1.31.0' });
    assert.equal(JSON.stringify(again), JSON.stringify(doc));
  });

  it('does not mutate the resources it is given', () => {
    const before = JSON.stringify(cronTabSchema);
    buildOpenApiV2([cronTabs], { title: 't', version: 'v' });
    assert.equal(JSON.stringify(cronTabSchema), before);
  });
});
