import type { FastifyReply, FastifyRequest } from 'fastify';
import { AGGREGATED_V2, type DiscoveryService } from './discovery.service.js';
import type { OpenApiDocumentsService, RenderedDocument } from './openapi-documents.service.js';
import { PLINTH_VERSION } from './version.js';
import { ApiError } from '@plinth/apimachinery';
import { parseAccept } from '../http/negotiation.js';
import { sendEncoded, sendPlain } from '../http/response-writer.js';

/**
 * The OpenAPI v2 protobuf media types clients ask for (kubectl sends the
 * deprecated `@` form) and the one kube-openapi answers with: Go's
 * mime.ParseMediaType refuses the `@`, so kubectl's validation would fail
 * with `mime: unexpected content after media subtype` on the `@` form.
 */
const PROTO_V2_ACCEPTED = new Set(['application/com.github.proto-openapi.spec.v2@v1.0+protobuf', 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf']);
const PROTO_V2 = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

/**
 * Whether the client asked for aggregated discovery. Only `v2` is served:
 * kube-apiserver 1.33+ no longer serves `apidiscovery.k8s.io/v2beta1`
 * (AggregatedDiscoveryRemoveBetaType, on by default), so a v2beta1 clause is
 * passed over like any media type the server does not offer.
 */
function wantsAggregated(accept: string | undefined): boolean {
  for (const r of parseAccept(accept)) {
    if (r.type === 'application' && r.subtype === 'json' && r.params.g === 'apidiscovery.k8s.io' && r.params.as === 'APIGroupDiscoveryList') {
      if (r.params.v === 'v2') return true;
      continue;
    }
    if (r.type === 'application' && r.subtype === 'json' && !r.params.as) return false;
  }
  return false;
}

function sendDocument(req: FastifyRequest, reply: FastifyReply, doc: RenderedDocument, contentType: string, immutable: boolean): void {
  reply.header('ETag', doc.etag).header('Vary', 'Accept');
  reply.header('Cache-Control', immutable ? 'public, immutable' : 'no-cache, private');
  if (req.headers['if-none-match'] === doc.etag) {
    reply.code(304).send();
    return;
  }
  if (typeof doc.body === 'string') sendEncoded(req, reply, 200, contentType, doc.body);
  else {
    (reply as unknown as { forcedContentType?: string }).forcedContentType = contentType;
    reply.code(200).header('Content-Type', contentType).send(Buffer.from(doc.body));
  }
}

const notFound = () => new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});

/** /version: the server's version.Info. */
export function sendVersion(req: FastifyRequest, reply: FastifyReply): void {
  // Upstream writes version.Info with WriteRawJSON: indented JSON whatever the Accept header asks (no YAML, no CBOR).
  sendEncoded(req, reply, 200, 'application/json', JSON.stringify(PLINTH_VERSION, null, 2));
}

/**
 * /api or /apis: the legacy version list or group list, or the aggregated
 * discovery document (v2) when the Accept header asks for it.
 */
export function sendRootDiscovery(req: FastifyRequest, reply: FastifyReply, discovery: DiscoveryService, tenant: string, legacy: boolean): void {
  if (wantsAggregated(req.headers.accept)) {
    const body = JSON.stringify(discovery.aggregated(tenant, legacy));
    reply.header('Vary', 'Accept');
    return sendEncoded(req, reply, 200, AGGREGATED_V2, body);
  }
  sendPlain(req, reply, 200, legacy ? discovery.coreVersions() : discovery.groupList(tenant));
}

/** /apis/{group}: the APIGroup, or 404. */
export function sendGroup(req: FastifyRequest, reply: FastifyReply, discovery: DiscoveryService, tenant: string, group: string): void {
  const found = discovery.apiGroup(tenant, group);
  if (!found) throw notFound();
  sendPlain(req, reply, 200, found);
}

/** /api/{version} (group '') or /apis/{group}/{version}: the APIResourceList, or 404. */
export function sendResourceList(req: FastifyRequest, reply: FastifyReply, discovery: DiscoveryService, tenant: string, group: string, version: string): void {
  const list = discovery.resourceList(tenant, group, version);
  if (!list) throw notFound();
  sendPlain(req, reply, 200, list);
}

/** /openapi/v2 as JSON, or as gnostic protobuf when asked for. */
export function sendOpenApiV2(req: FastifyRequest, reply: FastifyReply, openapi: OpenApiDocumentsService, tenant: string): void {
  const wantsProto = parseAccept(req.headers.accept).some((r) => PROTO_V2_ACCEPTED.has(`${r.type}/${r.subtype}`));
  return wantsProto
    ? sendDocument(req, reply, openapi.v2Proto(tenant), PROTO_V2, false)
    : sendDocument(req, reply, openapi.v2Json(tenant), 'application/json', false);
}

/** /openapi/v3 (the index) or /openapi/v3/{api/v1 | apis/group/version} (one document, immutable when asked by its hash), or 404. */
export function sendOpenApiV3(req: FastifyRequest, reply: FastifyReply, openapi: OpenApiDocumentsService, tenant: string, path: string): void {
  const parts = path.split('/').filter(Boolean);
  if (parts.length === 0) return sendDocument(req, reply, openapi.v3Index(tenant), 'application/json', false);
  const doc = openapi.v3(tenant, parts.slice(1).join('/'));
  if (!doc) throw notFound();
  const hash = (req.query as Record<string, string>).hash;
  sendDocument(req, reply, doc, 'application/json', hash !== undefined && `"${hash}"` === doc.etag);
}
