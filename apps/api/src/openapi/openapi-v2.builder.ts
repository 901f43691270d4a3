import type { ResourceDefinition } from '../registry/resource-definition.js';
import { type JsonObject, REF_PREFIX, buildDefinitions, sortKeysDeep } from './openapi-definitions.js';
import { patchMediaTypes, responseMediaTypes } from './openapi-media-types.js';
import { type PlannedOperation, type PlannedPath, planPaths } from './openapi-operations.js';
import type { ParameterSpec } from './openapi-parameters.js';

/** Title and version of a Swagger document's `info`. */
export interface OpenApiInfo {
  title: string;
  version: string;
}

const ref = (name: string) => ({ $ref: REF_PREFIX.v2 + name });

function renderParameter(p: ParameterSpec): JsonObject {
  const out: JsonObject = { description: p.description, in: p.in, name: p.name, type: p.type, uniqueItems: true };
  if (p.required) out.required = true;
  return out;
}

function renderOperation(op: PlannedOperation): JsonObject {
  const parameters: JsonObject[] = [];
  if (op.body) {
    const body: JsonObject = { in: 'body', name: 'body', schema: ref(op.body.definition) };
    if (op.body.required) body.required = true;
    parameters.push(body);
  }
  parameters.push(...op.parameters.map(renderParameter));
  const responses: JsonObject = {};
  for (const r of op.responses) responses[r.code] = r.definition ? { description: r.description, schema: ref(r.definition) } : { description: r.description };
  const out: JsonObject = {
    consumes: op.body?.patch ? patchMediaTypes(op) : ['*/*'],
    description: op.description,
    operationId: op.operationId,
    produces: responseMediaTypes(op),
    responses,
    schemes: ['https'],
    tags: [op.tag],
    'x-kubernetes-action': op.action,
    'x-kubernetes-group-version-kind': { group: op.gvk.group, kind: op.gvk.kind, version: op.gvk.version },
  };
  if (parameters.length > 0) out.parameters = parameters;
  return out;
}

function renderPath(p: PlannedPath): JsonObject {
  const out: JsonObject = { parameters: p.parameters.map(renderParameter) };
  for (const op of p.operations) out[op.method] = renderOperation(op);
  return out;
}

/**
 * A Swagger 2.0 document like kube-apiserver's `/openapi/v2` for `resources`:
 * REST-friendly `definitions` (kinds and lists carry
 * `x-kubernetes-group-version-kind`, shared types are `$ref`s, patch-strategy
 * extensions kept), and `paths` with one operation per served verb. Keys are
 * sorted at every level so the JSON is byte-stable for ETags. Pure: inputs are
 * not mutated; the result is a fresh object.
 */
export function buildOpenApiV2(resources: ResourceDefinition[], info: OpenApiInfo): JsonObject {
  const paths: JsonObject = {};
  for (const p of planPaths(resources)) paths[p.path] = renderPath(p);
  return sortKeysDeep({
    definitions: buildDefinitions(resources, 'v2'),
    info: { title: info.title, version: info.version },
    paths,
    security: [{ BearerToken: [] }],
    securityDefinitions: { BearerToken: { description: 'Bearer Token authentication', in: 'header', name: 'authorization', type: 'apiKey' } },
    swagger: '2.0',
  });
}
