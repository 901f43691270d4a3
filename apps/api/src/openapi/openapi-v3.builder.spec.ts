import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configMapResource } from '../kinds/configmap/configmap.resource.js';
import type { ResourceDefinition } from '../registry/resource-definition.js';
import { configMapSchema, secretSchema } from '../schema/builtin-schemas.js';
import { buildOpenApiV3, buildOpenApiV3Index } from './openapi-v3.builder.js';

type Json = Record<string, any>;

/** The real ConfigMap definition with `overrides`: builders only read its declarative parts. */
function fakeResource(overrides: Partial<ResourceDefinition>): ResourceDefinition {
  return { ...configMapResource, storageResource: '/configmaps', ...overrides };
}

const resources = [
  fakeResource({}),
  fakeResource({ resource: 'secrets', singular: 'secret', kind: 'Secret', listKind: 'SecretList', schema: secretSchema }),
  fakeResource({
    group: 'stable.example.com',
    resource: 'crontabs',
    kind: 'CronTab',
    listKind: 'CronTabList',
    schema: {
      type: 'object',
      properties: {
        spec: { type: 'object', nullable: true, properties: { a: { type: 'string' } } },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { data: { type: 'string' } } },
      },
    },
    subresources: [{ name: 'status', kind: 'CronTab', group: 'stable.example.com', version: 'v1', verbs: ['get', 'patch', 'update'] }],
  }),
];
const core = buildOpenApiV3(resources, 'v1') as Json;
const crd = buildOpenApiV3(resources, 'stable.example.com/v1') as Json;

// Mirrors kubectl's query_param_verifier_v3: find a PATCH operation carrying the GVK, then the query parameter.
function supportsQueryParam(doc: Json, gvk: { group: string; version: string; kind: string }, param: string): boolean | undefined {
  for (const path of Object.values(doc.paths) as Json[]) {
    const op = path.patch;
    const ext = op?.['x-kubernetes-group-version-kind'];
    if (!op || ext?.group !== gvk.group || ext?.version !== gvk.version || ext?.kind !== gvk.kind) continue;
    return (op.parameters ?? []).some((p: Json) => p.name === param && p.in === 'query');
  }
  return undefined;
}

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

describe('buildOpenApiV3', () => {
  it('produces an OpenAPI 3.0 document for just the requested group/version', () => {
    assert.equal(core.openapi, '3.0.0');
    assert.ok(Object.keys(core.paths).every((p) => p.startsWith('/api/v1/')));
    assert.ok(Object.keys(crd.paths).every((p) => p.startsWith('/apis/stable.example.com/v1/')));
    assert.ok(core.components.schemas['io.k8s.api.core.v1.Secret']);
    assert.equal(core.components.schemas['com.example.stable.v1.CronTab'], undefined);
  });

  it('wraps described references in allOf and resolves every $ref', () => {
    const metadata = core.components.schemas['io.k8s.api.core.v1.ConfigMap'].properties.metadata;
    assert.deepEqual(metadata.allOf, [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }]);
    assert.match(metadata.description, /^Standard object's metadata/);
    for (const doc of [core, crd]) {
      for (const ref of collectRefs(doc)) {
        assert.ok(ref.startsWith('#/components/schemas/'), ref);
        assert.ok(doc.components.schemas[ref.slice('#/components/schemas/'.length)], `dangling ${ref}`);
      }
    }
  });

  it('keeps nullable in v3 and the GVK list on definitions', () => {
    const cronTab = crd.components.schemas['com.example.stable.v1.CronTab'];
    assert.equal(cronTab.properties.spec.nullable, true);
    assert.equal(cronTab.properties.spec.type, 'object');
    assert.deepEqual(cronTab['x-kubernetes-group-version-kind'], [{ group: 'stable.example.com', kind: 'CronTab', version: 'v1' }]);
  });

  it('publishes apiVersion, kind and ObjectMeta on embedded resources', () => {
    const template = crd.components.schemas['com.example.stable.v1.CronTab'].properties.template;
    assert.deepEqual(template.properties.metadata.allOf, [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }]);
    assert.deepEqual(template.required, ['kind', 'apiVersion']);
    assert.equal(template.properties.data.type, 'string');
    assert.equal(template.properties.kind.type, 'string');
  });

  it('lets kubectl detect server-side field validation on PATCH', () => {
    assert.equal(supportsQueryParam(core, { group: '', version: 'v1', kind: 'ConfigMap' }, 'fieldValidation'), true);
    assert.equal(supportsQueryParam(core, { group: '', version: 'v1', kind: 'Secret' }, 'fieldValidation'), true);
    assert.equal(supportsQueryParam(crd, { group: 'stable.example.com', version: 'v1', kind: 'CronTab' }, 'fieldValidation'), true);
    for (const path of Object.values(crd.paths) as Json[]) {
      if (path.patch) assert.ok(path.patch.parameters.some((p: Json) => p.name === 'fieldValidation'), 'every PATCH carries fieldValidation');
    }
  });

  it('describes request bodies for create, update, patch and delete', () => {
    const coll = core.paths['/api/v1/namespaces/{namespace}/configmaps'];
    assert.deepEqual(coll.post.requestBody, { content: { '*/*': { schema: { $ref: '#/components/schemas/io.k8s.api.core.v1.ConfigMap' } } }, required: true });
    const item = core.paths['/api/v1/namespaces/{namespace}/configmaps/{name}'];
    assert.deepEqual(Object.keys(item.patch.requestBody.content), [
      'application/apply-patch+yaml',
      'application/json-patch+json',
      'application/merge-patch+json',
      'application/strategic-merge-patch+json',
    ]);
    assert.equal(item.put.requestBody.required, true);
    assert.equal(item.delete.requestBody.required, undefined);
    assert.equal(item.delete.requestBody.content['*/*'].schema.$ref, '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions');
  });

  it('types responses per media type and parameters through schema', () => {
    const get = core.paths['/api/v1/namespaces/{namespace}/configmaps/{name}'].get;
    assert.deepEqual(Object.keys(get.responses['200'].content), ['application/json', 'application/yaml']);
    assert.deepEqual(get.responses['401'], { description: 'Unauthorized' });
    const name = core.paths['/api/v1/namespaces/{namespace}/configmaps/{name}'].parameters[0];
    assert.deepEqual(name, { description: 'name of the ConfigMap', in: 'path', name: 'name', required: true, schema: { type: 'string', uniqueItems: true } });
    const crList = crd.paths['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs'].get;
    assert.deepEqual(Object.keys(crList.responses['200'].content), ['application/json', 'application/json;stream=watch', 'application/yaml']);
  });

  it('serves the status subresource with the main kind', () => {
    const status = crd.paths['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/status'];
    assert.equal(status.put.operationId, 'replaceStableExampleComV1NamespacedCronTabStatus');
    assert.equal(status.get.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/com.example.stable.v1.CronTab');
  });

  it('is deterministic for the same input', () => {
    assert.equal(JSON.stringify(buildOpenApiV3([...resources].reverse(), 'v1')), JSON.stringify(core));
  });
});

describe('buildOpenApiV3Index', () => {
  it('points each group/version at its document with a hash', () => {
    const index = buildOpenApiV3Index(['v1', 'stable.example.com/v1', 'apps/v1', 'v1'], (gv) => `H-${gv.length}`);
    assert.deepEqual(index, {
      paths: {
        'api/v1': { serverRelativeURL: '/openapi/v3/api/v1?hash=H-2' },
        'apis/apps/v1': { serverRelativeURL: '/openapi/v3/apis/apps/v1?hash=H-7' },
        'apis/stable.example.com/v1': { serverRelativeURL: '/openapi/v3/apis/stable.example.com/v1?hash=H-21' },
      },
    });
  });
});
