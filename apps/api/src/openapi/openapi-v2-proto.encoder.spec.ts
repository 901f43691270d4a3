import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import YAML from 'yaml';
import { configMapResource } from '../kinds/configmap/configmap.resource.js';
import type { ResourceDefinition } from '../registry/resource-definition.js';
import { configMapSchema } from '../schema/builtin-schemas.js';
import { openApiV2DocumentType, openApiV2MessageType } from './openapi-v2-proto.descriptor.js';
import { encodeOpenApiV2Proto } from './openapi-v2-proto.encoder.js';
import { buildOpenApiV2 } from './openapi-v2.builder.js';

type Msg = Record<string, any>;

const configMaps: ResourceDefinition = configMapResource;

const json = buildOpenApiV2([configMaps], { title: 'Kubernetes', version: 'v1.31.0' });
const bytes = encodeOpenApiV2Proto(json);
const decoded = openApiV2DocumentType.toObject(openApiV2DocumentType.decode(bytes)) as Msg;

const named = (list: Msg[] | undefined, name: string): Msg | undefined => list?.find((e) => e.name === name)?.value;
const extension = (m: Msg, name: string): unknown => {
  const yaml = named(m.vendor_extension, name)?.yaml;
  return yaml === undefined ? undefined : YAML.parse(yaml);
};

describe('encodeOpenApiV2Proto', () => {
  it('encodes the swagger version as field 1 of Document', () => {
    assert.deepEqual([...encodeOpenApiV2Proto({ swagger: '2.0' })], [0x0a, 0x03, 0x32, 0x2e, 0x30]);
  });

  it('uses gnostic field numbers for the fields client-go reads', () => {
    const id = (msg: string, field: string) => openApiV2MessageType(msg).fields[field].id;
    assert.equal(id('Document', 'paths'), 8);
    assert.equal(id('Document', 'definitions'), 9);
    assert.equal(id('Schema', '_ref'), 1);
    assert.equal(id('Schema', 'description'), 4);
    assert.equal(id('Schema', 'required'), 19);
    assert.equal(id('Schema', 'additional_properties'), 21);
    assert.equal(id('Schema', 'type'), 22);
    assert.equal(id('Schema', 'items'), 23);
    assert.equal(id('Schema', 'properties'), 25);
    assert.equal(id('Schema', 'vendor_extension'), 31);
    assert.equal(id('Operation', 'parameters'), 8);
    assert.equal(id('Operation', 'vendor_extension'), 13);
    assert.equal(id('QueryParameterSubSchema', 'name'), 4);
    assert.equal(id('NonBodyParameter', 'query_parameter_sub_schema'), 3);
    assert.equal(id('Any', 'yaml'), 2);
  });

  it('round-trips definitions with their properties, refs and formats', () => {
    assert.equal(decoded.swagger, '2.0');
    assert.equal(decoded.info.title, 'Kubernetes');
    const names = decoded.definitions.additional_properties.map((d: Msg) => d.name);
    assert.deepEqual(names, Object.keys((json as Msg).definitions));
    const cm = named(decoded.definitions.additional_properties, 'io.k8s.api.core.v1.ConfigMap') as Msg;
    assert.deepEqual(cm.type.value, ['object']);
    const props = cm.properties.additional_properties as Msg[];
    assert.match(named(props, 'data')?.description, /^Data contains the configuration data/);
    assert.deepEqual(named(props, 'binaryData')?.additional_properties.schema.format, 'byte');
    assert.equal(named(props, 'metadata')?._ref, '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
    const list = named(decoded.definitions.additional_properties, 'io.k8s.api.core.v1.ConfigMapList') as Msg;
    assert.deepEqual(list.required, ['items']);
    assert.equal(named(list.properties.additional_properties, 'items')?.items.schema[0]._ref, '#/definitions/io.k8s.api.core.v1.ConfigMap');
  });

  it('carries vendor extensions as YAML that parses back to the JSON values', () => {
    const cm = named(decoded.definitions.additional_properties, 'io.k8s.api.core.v1.ConfigMap') as Msg;
    assert.deepEqual(extension(cm, 'x-kubernetes-group-version-kind'), [{ group: '', kind: 'ConfigMap', version: 'v1' }]);
    const meta = named(decoded.definitions.additional_properties, 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta') as Msg;
    const owners = named(meta.properties.additional_properties, 'ownerReferences') as Msg;
    assert.equal(extension(owners, 'x-kubernetes-patch-strategy'), 'merge');
    assert.equal(extension(owners, 'x-kubernetes-patch-merge-key'), 'uid');
    assert.deepEqual(extension(owners, 'x-kubernetes-list-map-keys'), ['uid']);
  });

  it('keeps PATCH operations findable the way client-go checks fieldValidation', () => {
    const path = named(decoded.paths.path, '/api/v1/namespaces/{namespace}/configmaps/{name}') as Msg;
    const patch = path.patch as Msg;
    assert.deepEqual(extension(patch, 'x-kubernetes-group-version-kind'), { group: '', kind: 'ConfigMap', version: 'v1' });
    const queryNames = patch.parameters.map((p: Msg) => p.parameter?.non_body_parameter?.query_parameter_sub_schema?.name).filter(Boolean);
    assert.deepEqual(queryNames, ['dryRun', 'fieldManager', 'fieldValidation', 'force']);
    assert.equal(patch.parameters[0].parameter.body_parameter.schema._ref, '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch');
    assert.equal(patch.operation_id, 'patchCoreV1NamespacedConfigMap');
    const ok = named(patch.responses.response_code, '200') as Msg;
    assert.equal(ok.response.schema.schema._ref, '#/definitions/io.k8s.api.core.v1.ConfigMap');
    const nameParam = path.parameters[0].parameter.non_body_parameter.path_parameter_sub_schema;
    assert.deepEqual({ name: nameParam.name, in: nameParam.in, required: nameParam.required }, { name: 'name', in: 'path', required: true });
  });

  it('encodes boolean additionalProperties, enums, $ref parameters and security', () => {
    const doc = {
      swagger: '2.0',
      paths: { '/x': { get: { parameters: [{ $ref: '#/parameters/p' }], responses: { '200': { description: 'OK' } } } } },
      definitions: { Closed: { type: 'object', additionalProperties: false, enum: ['a', 'b'] } },
      security: [{ BearerToken: [] }],
      securityDefinitions: { BearerToken: { type: 'apiKey', name: 'authorization', in: 'header' } },
    };
    const d = openApiV2DocumentType.toObject(openApiV2DocumentType.decode(encodeOpenApiV2Proto(doc))) as Msg;
    const closed = named(d.definitions.additional_properties, 'Closed') as Msg;
    assert.equal(closed.additional_properties.boolean, false);
    assert.deepEqual(closed.enum.map((e: Msg) => YAML.parse(e.yaml)), ['a', 'b']);
    const get = (named(d.paths.path, '/x') as Msg).get;
    assert.equal(get.parameters[0].json_reference._ref, '#/parameters/p');
    assert.equal(d.security[0].additional_properties[0].name, 'BearerToken');
    assert.equal(named(d.security_definitions.additional_properties, 'BearerToken')?.api_key_security.in, 'header');
  });

  it('does not mutate the document it encodes', () => {
    const before = JSON.stringify(json);
    encodeOpenApiV2Proto(json);
    assert.equal(JSON.stringify(json), before);
  });
});
