import type { ResourceDefinition, SubresourceDefinition } from '../registry/resource-definition.js';
import { compareStrings } from '@plinth/apimachinery';
import { META_V1_NAMES } from '../schema/builtin-schemas.js';
import { sortedResources } from './openapi-definitions.js';
import {
  type GroupVersionKind,
  definitionNameFor,
  groupVersionUrlPrefix,
  isBuiltinGroup,
  operationIdGroupVersion,
  operationTag,
  toValidOperationId,
} from './openapi-naming.js';
import { NAMESPACE_PARAMETER, OPERATION_PARAMETERS, type ParameterSpec, QUERY_PARAMETERS, nameParameter } from './openapi-parameters.js';

/** The HTTP methods Plinth's resource paths use. */
export type HttpMethod = 'get' | 'put' | 'post' | 'patch' | 'delete';

/** A request body: the definition it is typed as, and whether it is a patch (patch media types). */
export interface OperationBody {
  definition: string;
  required: boolean;
  patch: boolean;
}

/** One response code, typed by a definition name (none for 401). */
export interface OperationResponse {
  code: string;
  description: string;
  definition?: string;
}

/** One operation of a path, independent of OpenAPI dialect. */
export interface PlannedOperation {
  method: HttpMethod;
  operationId: string;
  description: string;
  /** `x-kubernetes-action`: get, list, watch, watchlist, post, put, patch, delete, deletecollection. */
  action: string;
  gvk: GroupVersionKind;
  tag: string;
  parameters: readonly ParameterSpec[];
  body?: OperationBody;
  responses: OperationResponse[];
  /** Whether the operation streams (lists and watches also produce the `;stream=watch` types). */
  streams: boolean;
  /** A built-in group: like upstream, only these advertise protobuf and strategic merge patch. */
  builtin: boolean;
}

/** One path with its shared parameters and operations (in method order get, put, post, delete, patch). */
export interface PlannedPath {
  path: string;
  parameters: ParameterSpec[];
  operations: PlannedOperation[];
}

interface ResourceContext {
  def: ResourceDefinition;
  prefix: string;
  gv: string;
  ns: string;
  kindName: string;
  listName: string;
  base: ParameterSpec[];
  template: Pick<PlannedOperation, 'gvk' | 'tag' | 'builtin'>;
}

const UNAUTHORIZED: OperationResponse = { code: '401', description: 'Unauthorized' };
const METHOD_ORDER: readonly HttpMethod[] = ['get', 'put', 'post', 'delete', 'patch'];

function ok(definition: string, extra: Array<[string, string]> = []): OperationResponse[] {
  return [{ code: '200', description: 'OK', definition }, ...extra.map(([code, description]) => ({ code, description, definition })), UNAUTHORIZED];
}

function contextOf(def: ResourceDefinition): ResourceContext {
  const gvk = { group: def.group, version: def.version, kind: def.kind };
  return {
    def,
    prefix: groupVersionUrlPrefix(def.group, def.version),
    gv: operationIdGroupVersion(def.group, def.version),
    ns: def.namespaced ? 'Namespaced' : '',
    kindName: definitionNameFor(gvk),
    listName: definitionNameFor({ ...gvk, kind: def.listKind }),
    base: def.namespaced ? [NAMESPACE_PARAMETER] : [],
    template: { gvk, tag: operationTag(def.group, def.version), builtin: isBuiltinGroup(def.group) },
  };
}

function writeOps(c: ResourceContext, target: string, idSuffix: string, what: string, verbs: readonly string[]): PlannedOperation[] {
  const id = (verb: string) => `${verb}${c.gv}${c.ns}${c.def.kind}${idSuffix}`;
  const t = { ...c.template, streams: false };
  const ops: PlannedOperation[] = [];
  if (verbs.includes('get')) {
    ops.push({ ...t, method: 'get', operationId: id('read'), description: `read ${what}`, action: 'get', parameters: [], responses: ok(target) });
  }
  if (verbs.includes('update')) {
    ops.push({
      ...t,
      method: 'put',
      operationId: id('replace'),
      description: `replace ${what}`,
      action: 'put',
      parameters: OPERATION_PARAMETERS.update,
      body: { definition: target, required: true, patch: false },
      responses: ok(target, [['201', 'Created']]),
    });
  }
  if (verbs.includes('patch')) {
    ops.push({
      ...t,
      method: 'patch',
      operationId: id('patch'),
      description: `partially update ${what}`,
      action: 'patch',
      parameters: OPERATION_PARAMETERS.patch,
      body: { definition: META_V1_NAMES.patch, required: true, patch: true },
      responses: ok(target, [['201', 'Created']]),
    });
  }
  return ops;
}

function collectionPath(c: ResourceContext, path: string): PlannedPath {
  const { def } = c;
  const t = { ...c.template, streams: false };
  const ops: PlannedOperation[] = [];
  if (def.verbs.includes('list')) {
    ops.push({
      ...t,
      streams: true,
      method: 'get',
      operationId: `list${c.gv}${c.ns}${def.kind}`,
      description: `list or watch objects of kind ${def.kind}`,
      action: 'list',
      parameters: OPERATION_PARAMETERS.list,
      responses: ok(c.listName),
    });
  }
  if (def.verbs.includes('create')) {
    ops.push({
      ...t,
      method: 'post',
      operationId: `create${c.gv}${c.ns}${def.kind}`,
      description: `create a ${def.kind}`,
      action: 'post',
      parameters: OPERATION_PARAMETERS.create,
      body: { definition: c.kindName, required: true, patch: false },
      responses: ok(c.kindName, [['201', 'Created'], ['202', 'Accepted']]),
    });
  }
  if (def.verbs.includes('deletecollection')) {
    ops.push({
      ...t,
      method: 'delete',
      operationId: `delete${c.gv}Collection${c.ns}${def.kind}`,
      description: `delete collection of ${def.kind}`,
      action: 'deletecollection',
      parameters: OPERATION_PARAMETERS.deletecollection,
      body: { definition: META_V1_NAMES.deleteOptions, required: false, patch: false },
      responses: ok(META_V1_NAMES.status),
    });
  }
  return { path, parameters: [...c.base, QUERY_PARAMETERS.pretty], operations: ops };
}

function itemPath(c: ResourceContext, path: string): PlannedPath {
  const { def } = c;
  const ops = writeOps(c, c.kindName, '', `the specified ${def.kind}`, def.verbs);
  if (def.verbs.includes('delete')) {
    ops.push({
      ...c.template,
      streams: false,
      method: 'delete',
      operationId: `delete${c.gv}${c.ns}${def.kind}`,
      description: `delete a ${def.kind}`,
      action: 'delete',
      parameters: OPERATION_PARAMETERS.delete,
      body: { definition: META_V1_NAMES.deleteOptions, required: false, patch: false },
      // Upstream types the answer by what the store returns: the object itself, or a Success Status.
      responses: ok(def.returnDeletedObject ? c.kindName : META_V1_NAMES.status, [['202', 'Accepted']]),
    });
  }
  return { path, parameters: [nameParameter(def.kind), ...c.base, QUERY_PARAMETERS.pretty], operations: ops };
}

function subresourcePath(c: ResourceContext, itemUrl: string, sub: SubresourceDefinition): PlannedPath {
  const gvk = { group: sub.group, version: sub.version, kind: sub.kind };
  const sc: ResourceContext = { ...c, template: { ...c.template, gvk } };
  const ops = writeOps(sc, definitionNameFor(gvk), toValidOperationId(sub.name, true), `${sub.name} of the specified ${c.def.kind}`, sub.verbs);
  return { path: `${itemUrl}/${sub.name}`, parameters: [nameParameter(sub.kind), ...c.base, QUERY_PARAMETERS.pretty], operations: ops };
}

function watchOp(c: ResourceContext, operationId: string, action: string, description: string, parameters: ParameterSpec[]): PlannedOperation {
  return {
    ...c.template,
    streams: true,
    method: 'get',
    operationId,
    description,
    action,
    parameters,
    responses: ok(META_V1_NAMES.watchEvent),
  };
}

function watchPaths(c: ResourceContext): PlannedPath[] {
  const { def } = c;
  const scope = def.namespaced ? `namespaces/{namespace}/${def.resource}` : def.resource;
  const listDesc = `watch individual changes to a list of ${def.kind}. deprecated: use the 'watch' parameter with a list operation instead.`;
  const itemDesc = `watch changes to an object of kind ${def.kind}. deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter.`;
  const params = [...OPERATION_PARAMETERS.list];
  const paths: PlannedPath[] = [
    { path: `${c.prefix}/watch/${scope}`, parameters: [...c.base, QUERY_PARAMETERS.pretty], operations: [watchOp(c, `watch${c.gv}${c.ns}${def.kind}List`, 'watchlist', listDesc, params)] },
    {
      path: `${c.prefix}/watch/${scope}/{name}`,
      parameters: [nameParameter(def.kind), ...c.base, QUERY_PARAMETERS.pretty],
      operations: [watchOp(c, `watch${c.gv}${c.ns}${def.kind}`, 'watch', itemDesc, params)],
    },
  ];
  if (def.namespaced) {
    const op = watchOp(c, `watch${c.gv}${def.kind}ListForAllNamespaces`, 'watchlist', listDesc, params);
    paths.push({ path: `${c.prefix}/watch/${def.resource}`, parameters: [QUERY_PARAMETERS.pretty], operations: [op] });
  }
  return paths;
}

function allNamespacesPath(c: ResourceContext): PlannedPath {
  const { def } = c;
  const op: PlannedOperation = {
    ...c.template,
    streams: true,
    method: 'get',
    operationId: `list${c.gv}${def.kind}ForAllNamespaces`,
    description: `list or watch objects of kind ${def.kind}`,
    action: 'list',
    parameters: OPERATION_PARAMETERS.list,
    responses: ok(c.listName),
  };
  return { path: `${c.prefix}/${def.resource}`, parameters: [QUERY_PARAMETERS.pretty], operations: [op] };
}

function planResource(def: ResourceDefinition): PlannedPath[] {
  const c = contextOf(def);
  const collectionUrl = def.namespaced ? `${c.prefix}/namespaces/{namespace}/${def.resource}` : `${c.prefix}/${def.resource}`;
  const itemUrl = `${collectionUrl}/{name}`;
  const paths = [collectionPath(c, collectionUrl), itemPath(c, itemUrl)];
  for (const sub of def.subresources) paths.push(subresourcePath(c, itemUrl, sub));
  if (def.namespaced && def.verbs.includes('list')) paths.push(allNamespacesPath(c));
  if (def.verbs.includes('watch')) paths.push(...watchPaths(c));
  return paths;
}

/**
 * Every path, with its operations, that kube-apiserver would publish for
 * `resources`: collection and item paths, all-namespaces lists, subresources
 * and the deprecated `/watch/` paths, one operation per verb the resource
 * serves. Paths without operations are left out; the result is sorted by path
 * and each path's operations by method. Pure.
 */
export function planPaths(resources: ResourceDefinition[]): PlannedPath[] {
  const byPath = new Map<string, PlannedPath>();
  for (const def of sortedResources(resources)) {
    for (const p of planResource(def)) {
      if (p.operations.length === 0 || byPath.has(p.path)) continue;
      p.operations.sort((a, b) => METHOD_ORDER.indexOf(a.method) - METHOD_ORDER.indexOf(b.method));
      byPath.set(p.path, p);
    }
  }
  return [...byPath.values()].sort((a, b) => compareStrings(a.path, b.path));
}
