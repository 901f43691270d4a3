/** The Kubernetes verb of a resource request. */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

/** What a request path and method address, as upstream's RequestInfoFactory derives it. */
export interface RequestInfo {
  tenant: string;
  /** True for /api and /apis paths that name a resource. */
  isResourceRequest: boolean;
  /** 'api' or 'apis'. */
  prefix: 'api' | 'apis' | '';
  group: string;
  version: string;
  namespace: string;
  resource: string;
  name: string;
  subresource: string;
  verb: Verb | '';
  /** The path after the tenant prefix, e.g. `/api/v1/namespaces`. */
  path: string;
  /**
   * Set for a request to an APIExport's view (`/services/apiexport/<tenant>/<export>/clusters/<tenant or *>/…`,
   * kcp's virtual workspace): the request is then `apiexports/content` of the export in its own tenant (what
   * authorization, fair queuing and audit see), and `inner` is the request below the prefix.
   */
  exportView?: { export: string; inner: RequestInfo };
  /**
   * Set for a request to the platform's view (`/services/platform/clusters/<tenant or *>/…`, docs/api-sharing.md):
   * the request is then `tenants/content` in the platform scope (tenant `default`), named after the addressed
   * tenant (none for `*`), and `inner` is the request below the prefix.
   */
  platformView?: { inner: RequestInfo };
}

/** The prefix of the platform's view across tenants (docs/api-sharing.md). */
const PLATFORM_VIEW_PREFIX = ['services', 'platform'];

/** The prefix of an APIExport's view (docs/api-sharing.md). */
const EXPORT_VIEW_PREFIX = ['services', 'apiexport'];

/** The group and version of APIExport (kinds/apis; repeated here, below the kinds). */
const APIS_GROUP_VERSION = { group: 'apis.plinth.dev', version: 'v1alpha1' };

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

function splitPath(path: string): string[] {
  return path.split('/').filter((p) => p.length > 0).map((p) => decodeURIComponent(p));
}

/**
 * Parses `/clusters/{tenant}/api/v1/...` or `/api/v1/...` (tenant `default`).
 * Never throws; a path that names no resource gets `isResourceRequest: false`.
 */
export function parseRequestInfo(method: string, rawPath: string, watchParam: boolean): RequestInfo {
  let parts: string[];
  try {
    parts = splitPath(rawPath);
  } catch {
    parts = [];
  }
  if (parts[0] === EXPORT_VIEW_PREFIX[0] && parts[1] === EXPORT_VIEW_PREFIX[1] && parts.length >= 4) return exportViewInfo(method, parts, watchParam);
  if (parts[0] === PLATFORM_VIEW_PREFIX[0] && parts[1] === PLATFORM_VIEW_PREFIX[1]) return platformViewInfo(method, parts, watchParam);
  let tenant = 'default';
  if (parts[0] === 'clusters' && parts.length >= 2) {
    tenant = parts[1];
    parts = parts.slice(2);
  }
  const info: RequestInfo = {
    tenant,
    isResourceRequest: false,
    prefix: '',
    group: '',
    version: '',
    namespace: '',
    resource: '',
    name: '',
    subresource: '',
    verb: '',
    path: '/' + parts.map(encodeURIComponent).join('/'),
  };
  if (parts[0] === 'api') {
    info.prefix = 'api';
    if (parts.length < 3) return info;
    info.version = parts[1];
    parts = parts.slice(2);
  } else if (parts[0] === 'apis') {
    info.prefix = 'apis';
    if (parts.length < 4) return info;
    info.group = parts[1];
    info.version = parts[2];
    parts = parts.slice(3);
  } else {
    return info;
  }
  if (parts[0] === 'namespaces' && parts.length > 1) {
    info.namespace = parts[1];
    if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2])) parts = parts.slice(2);
  }
  info.isResourceRequest = true;
  info.resource = parts[0] ?? '';
  info.name = parts[1] ?? '';
  info.subresource = parts.slice(2).join('/');
  info.verb = verbFor(method, info.name !== '', watchParam);
  return info;
}

/** The request info of an APIExport view path (`parts` split, the prefix included): `apiexports/content` of the export, with the inner request. */
function exportViewInfo(method: string, parts: string[], watchParam: boolean): RequestInfo {
  const [, , tenant, name, ...rest] = parts;
  const innerPath = '/' + rest.map(encodeURIComponent).join('/');
  const inner = rest[0] === 'clusters' && rest.length >= 2 ? parseRequestInfo(method, innerPath, watchParam) : undefined;
  return {
    tenant,
    isResourceRequest: inner?.isResourceRequest === true,
    prefix: 'apis',
    ...APIS_GROUP_VERSION,
    namespace: '',
    resource: 'apiexports',
    name,
    subresource: 'content',
    verb: inner?.verb ?? '',
    path: '/' + parts.map(encodeURIComponent).join('/'),
    exportView: inner ? { export: name, inner } : undefined,
  };
}

/** The request info of a platform view path (`parts` split, the prefix included): `tenants/content` in the platform scope, with the inner request. */
function platformViewInfo(method: string, parts: string[], watchParam: boolean): RequestInfo {
  const rest = parts.slice(2);
  const innerPath = '/' + rest.map(encodeURIComponent).join('/');
  const inner = rest[0] === 'clusters' && rest.length >= 2 ? parseRequestInfo(method, innerPath, watchParam) : undefined;
  return {
    tenant: 'default',
    isResourceRequest: inner?.isResourceRequest === true,
    prefix: 'apis',
    group: 'tenancy.plinth.dev',
    version: 'v1beta1',
    namespace: '',
    resource: 'tenants',
    name: inner && inner.tenant !== '*' ? inner.tenant : '',
    subresource: 'content',
    verb: inner?.verb ?? '',
    path: '/' + parts.map(encodeURIComponent).join('/'),
    platformView: inner ? { inner } : undefined,
  };
}

/**
 * Whether the path puts the resource inside a namespace (`/namespaces/{ns}/configmaps`), as opposed to naming the
 * namespace object itself (`/namespaces/{ns}`, whose name the grammar reads as a namespace too) or no namespace.
 */
export function inNamespaceScope(info: RequestInfo): boolean {
  return info.namespace !== '' && info.resource !== 'namespaces';
}

function verbFor(method: string, hasName: boolean, watch: boolean): Verb | '' {
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (watch) return 'watch';
      return hasName ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return hasName ? 'delete' : 'deletecollection';
    default:
      return '';
  }
}

/** The watch parameter as the request filters read it before the query is parsed: `watch=true` or `watch=1`. */
const WATCH_PARAM = /[?&]watch=(true|1)(&|$)/;

/** What {@link requestInfoOf} remembers of a request: the inputs it parsed and the result. */
interface ParsedInfo {
  method: string;
  url: string;
  watch: boolean;
  info: RequestInfo;
}

const parsed = new WeakMap<object, ParsedInfo>();

/**
 * {@link parseRequestInfo} of a request's method and path, parsed once per
 * request and shared by the request filters and the handler (the
 * authentication, audit and routing stages each asked for it). `watch`
 * defaults to the URL's `watch=true|1`. The result is shared: callers must
 * not mutate it. Never throws.
 */
export function requestInfoOf(req: { method: string; url: string }, watch = WATCH_PARAM.test(req.url)): RequestInfo {
  const known = parsed.get(req);
  if (known && known.method === req.method && known.url === req.url && known.watch === watch) return known.info;
  const q = req.url.indexOf('?');
  const info = parseRequestInfo(req.method, q === -1 ? req.url : req.url.slice(0, q), watch);
  parsed.set(req, { method: req.method, url: req.url, watch, info });
  return info;
}
