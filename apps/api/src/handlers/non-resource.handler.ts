import type { FastifyReply, FastifyRequest } from 'fastify';
import { AGGREGATED_V2, AGGREGATED_V2BETA1, type DiscoveryService } from '../discovery/discovery.service.js';
import type { OpenApiDocumentsService, RenderedDocument } from '../discovery/openapi-documents.service.js';
import { PLINTH_VERSION } from '../discovery/version.js';
import { ApiError } from '@plinth/apimachinery';
import { parseAccept } from '../http/negotiation.js';
import type { RequestInfo } from '../http/request-info.js';
import { sendEncoded, sendPlain } from '../http/response-writer.js';

/**
 * The OpenAPI v2 protobuf media types clients ask for (kubectl sends the
 * deprecated `@` form) and the one kube-openapi answers with: Go's
 * mime.ParseMediaType refuses the `@`, so kubectl's validation would fail
 * with `mime: unexpected content after media subtype` on the `@` form.
 */
const PROTO_V2_ACCEPTED = new Set(['application/com.github.proto-openapi.spec.v2@v1.0+protobuf', 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf']);
const PROTO_V2 = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

/** Which aggregated discovery version the client asked for, if any. */
function aggregatedVersion(accept: string | undefined): 'v2' | 'v2beta1' | undefined {
  for (const r of parseAccept(accept)) {
    if (r.type === 'application' && r.subtype === 'json' && r.params.g === 'apidiscovery.k8s.io' && r.params.as === 'APIGroupDiscoveryList') {
      if (r.params.v === 'v2') return 'v2';
      if (r.params.v === 'v2beta1') return 'v2beta1';
    }
    if (r.type === 'application' && r.subtype === 'json' && !r.params.as) return undefined;
  }
  return undefined;
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

/**
 * Serves the paths that name no resource: /version, discovery (/api,
 * /api/v1, /apis, /apis/{g}, /apis/{g}/{v}, legacy or aggregated per
 * Accept) and OpenAPI (/openapi/v2, /openapi/v3[/...]). Throws 404 for
 * anything else.
 */
export function handleNonResource(
  req: FastifyRequest,
  reply: FastifyReply,
  info: RequestInfo,
  discovery: DiscoveryService,
  openapi: OpenApiDocumentsService,
): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') throw ApiError.methodNotAllowed('the server does not allow this method on the requested resource');
  const parts = info.path.split('/').filter(Boolean).map(decodeURIComponent);
  const tenant = info.tenant;
  const accept = req.headers.accept;
  const [p0, p1, p2] = parts;
  if (p0 === 'version' && parts.length === 1) return sendPlain(req, reply, 200, PLINTH_VERSION);
  if (p0 === 'api' || p0 === 'apis') {
    if (parts.length === 1) {
      const agg = aggregatedVersion(accept);
      if (agg) {
        const body = JSON.stringify(discovery.aggregated(tenant, p0 === 'api', agg));
        reply.header('Vary', 'Accept');
        return sendEncoded(req, reply, 200, agg === 'v2' ? AGGREGATED_V2 : AGGREGATED_V2BETA1, body);
      }
      return sendPlain(req, reply, 200, p0 === 'api' ? discovery.coreVersions() : discovery.groupList(tenant));
    }
    if (p0 === 'api' && parts.length === 2) {
      const list = discovery.resourceList(tenant, '', p1);
      if (!list) throw notFound();
      return sendPlain(req, reply, 200, list);
    }
    if (p0 === 'apis' && parts.length === 2) {
      const group = discovery.apiGroup(tenant, p1);
      if (!group) throw notFound();
      return sendPlain(req, reply, 200, group);
    }
    if (p0 === 'apis' && parts.length === 3) {
      const list = discovery.resourceList(tenant, p1, p2);
      if (!list) throw notFound();
      return sendPlain(req, reply, 200, list);
    }
  }
  if (p0 === 'openapi' && p1 === 'v2' && parts.length === 2) {
    const wantsProto = parseAccept(accept).some((r) => PROTO_V2_ACCEPTED.has(`${r.type}/${r.subtype}`));
    return wantsProto
      ? sendDocument(req, reply, openapi.v2Proto(tenant), PROTO_V2, false)
      : sendDocument(req, reply, openapi.v2Json(tenant), 'application/json', false);
  }
  if (p0 === 'openapi' && p1 === 'v3') {
    if (parts.length === 2) return sendDocument(req, reply, openapi.v3Index(tenant), 'application/json', false);
    const gv = parts[2] === 'api' ? parts.slice(3).join('/') : parts.slice(3).join('/');
    const doc = openapi.v3(tenant, gv);
    if (!doc) throw notFound();
    const hash = (req.query as Record<string, string>).hash;
    return sendDocument(req, reply, doc, 'application/json', hash !== undefined && `"${hash}"` === doc.etag);
  }
  throw notFound();
}
