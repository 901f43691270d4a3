import { type ResourceDefinition, groupVersion } from '../registry/resource-definition.js';
import { compareStrings } from '@plinth/apimachinery';
import { type JsonObject, REF_PREFIX, buildDefinitions, sortKeysDeep } from './openapi-definitions.js';
import { patchMediaTypes, responseMediaTypes } from './openapi-media-types.js';
import { type PlannedOperation, type PlannedPath, planPaths } from './openapi-operations.js';
import { openApiV3PathKey } from './openapi-naming.js';
import type { ParameterSpec } from './openapi-parameters.js';

const schemaRef = (name: string) => ({ schema: { $ref: REF_PREFIX.v3 + name } });

function renderParameter(p: ParameterSpec): JsonObject {
  const out: JsonObject = { description: p.description, in: p.in, name: p.name, schema: { type: p.type, uniqueItems: true } };
  if (p.required) out.required = true;
  return out;
}

function renderRequestBody(op: PlannedOperation): JsonObject | undefined {
  if (!op.body) return undefined;
  const types = op.body.patch ? patchMediaTypes(op) : ['*/*'];
  const body: JsonObject = { content: Object.fromEntries(types.map((t) => [t, schemaRef(op.body!.definition)])) };
  if (op.body.required) body.required = true;
  return body;
}

function renderOperation(op: PlannedOperation): JsonObject {
  const responses: JsonObject = {};
  for (const r of op.responses) {
    const def = r.definition;
    responses[r.code] = def
      ? { content: Object.fromEntries(responseMediaTypes(op).map((t) => [t, schemaRef(def)])), description: r.description }
      : { description: r.description };
  }
  const out: JsonObject = {
    description: op.description,
    operationId: op.operationId,
    responses,
    tags: [op.tag],
    'x-kubernetes-action': op.action,
    // kubectl's fieldValidation probe reads this (a single object, not a list) on PATCH operations.
    'x-kubernetes-group-version-kind': { group: op.gvk.group, kind: op.gvk.kind, version: op.gvk.version },
  };
  if (op.parameters.length > 0) out.parameters = op.parameters.map(renderParameter);
  const requestBody = renderRequestBody(op);
  if (requestBody) out.requestBody = requestBody;
  return out;
}

function renderPath(p: PlannedPath): JsonObject {
  const out: JsonObject = { parameters: p.parameters.map(renderParameter) };
  for (const op of p.operations) out[op.method] = renderOperation(op);
  return out;
}

/**
 * An OpenAPI 3.0 document for one group/version (`v1`, `apps/v1`) like
 * kube-apiserver's `/openapi/v3/api/v1`: `components.schemas` named and
 * extended as in v2 but referenced through `#/components/schemas/…` (wrapped
 * in `allOf` where a description sits beside the reference), and the paths of
 * the resources in that group/version with request bodies and the
 * `fieldValidation` parameter on POST/PUT/PATCH. Resources of other
 * group/versions are ignored; with none left, `paths` is empty. Keys are
 * sorted at every level. Pure.
 */
export function buildOpenApiV3(resources: ResourceDefinition[], gv: string): JsonObject {
  const selected = resources.filter((r) => groupVersion(r) === gv);
  const paths: JsonObject = {};
  for (const p of planPaths(selected)) paths[p.path] = renderPath(p);
  return sortKeysDeep({
    components: {
      schemas: buildDefinitions(selected, 'v3'),
      securitySchemes: { BearerToken: { description: 'Bearer Token authentication', in: 'header', name: 'authorization', type: 'apiKey' } },
    },
    info: { title: 'Kubernetes', version: 'unversioned' },
    openapi: '3.0.0',
    paths,
    security: [{ BearerToken: [] }],
  });
}

/**
 * The `/openapi/v3` discovery index: one entry per group/version
 * (`api/v1`, `apis/<group>/<version>`) pointing at its document with the
 * `hash` query parameter from `hashOf(gv)`. Duplicates collapse; keys sorted.
 */
export function buildOpenApiV3Index(groupVersions: string[], hashOf: (gv: string) => string): { paths: Record<string, { serverRelativeURL: string }> } {
  const entries = [...new Set(groupVersions)].map((gv) => {
    const key = openApiV3PathKey(gv);
    return [key, { serverRelativeURL: `/openapi/v3/${key}?hash=${encodeURIComponent(hashOf(gv))}` }] as const;
  });
  entries.sort(([a], [b]) => compareStrings(a, b));
  return { paths: Object.fromEntries(entries) };
}
