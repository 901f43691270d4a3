import { ApiError } from '@plinth/apimachinery';

/** One entry of an Accept header. */
export interface MediaRange {
  type: string;
  subtype: string;
  params: Record<string, string>;
  q: number;
}

/** How to encode a response. */
export interface ResponseFormat {
  encoding: 'json' | 'yaml' | 'cbor';
  /** 'table': a meta.k8s.io/v1 Table; 'partial': PartialObjectMetadata(List); 'none': the object. */
  transform: 'none' | 'table' | 'partial';
  /** The Content-Type to answer with. */
  contentType: string;
}

/** Parses an Accept header into ranges sorted by q (stable). Never throws. */
export function parseAccept(header: string | undefined): MediaRange[] {
  if (!header) return [];
  const ranges = header.split(',').map((part, i) => {
    const [mt, ...paramParts] = part.trim().split(';');
    const [type = '', subtype = ''] = mt.trim().toLowerCase().split('/');
    const params: Record<string, string> = {};
    for (const p of paramParts) {
      const eq = p.indexOf('=');
      if (eq > 0) params[p.slice(0, eq).trim().toLowerCase()] = p.slice(eq + 1).trim().replace(/^"|"$/g, '');
    }
    const q = params.q !== undefined ? Number(params.q) : 1;
    delete params.q;
    return { type, subtype, params, q: Number.isFinite(q) ? q : 0, i };
  });
  return ranges
    .filter((r) => r.q > 0 && r.type)
    .sort((a, b) => b.q - a.q || a.i - b.i)
    .map(({ i: _i, ...r }) => r);
}

const SUPPORTED = 'application/json, application/yaml';
const SUPPORTED_WITH_CBOR = `${SUPPORTED}, application/cbor`;

const BASE_TYPES: Record<string, ResponseFormat['encoding']> = { json: 'json', yaml: 'yaml', cbor: 'cbor' };

function formatFor(r: MediaRange, allowTransforms: boolean, cbor: boolean): ResponseFormat | undefined {
  const found = r.type === 'application' ? BASE_TYPES[r.subtype] : undefined;
  const encoding = found === 'cbor' && !cbor ? undefined : found;
  const wildcard = (r.type === '*' && r.subtype === '*') || (r.type === 'application' && r.subtype === '*');
  const as = r.params.as;
  if (as !== undefined) {
    if (encoding === undefined) return undefined;
    if (r.params.g !== 'meta.k8s.io' || !['v1', 'v1beta1'].includes(r.params.v ?? '')) return undefined;
    if (!allowTransforms) return undefined;
    const base = `application/${encoding}`;
    if (as === 'Table') return { encoding, transform: 'table', contentType: `${base};as=Table;v=${r.params.v};g=meta.k8s.io` };
    if (as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') {
      return { encoding, transform: 'partial', contentType: `${base};as=${as};v=${r.params.v};g=meta.k8s.io` };
    }
    return undefined;
  }
  if (wildcard) return { encoding: 'json', transform: 'none', contentType: 'application/json' };
  if (encoding !== undefined) return { encoding, transform: 'none', contentType: `application/${encoding}` };
  return undefined;
}

/**
 * Picks the response format for `accept`. `allowTransforms` is false where
 * Table/PartialObjectMetadata cannot be served (e.g. Status-only answers);
 * `cbor` says whether application/cbor may be served (the
 * CBORServingAndStorage gate). Throws ApiError 406 when nothing acceptable
 * can be served, listing what can, as upstream.
 */
export function negotiate(accept: string | undefined, allowTransforms = true, cbor = false): ResponseFormat {
  const ranges = parseAccept(accept);
  if (ranges.length === 0) return { encoding: 'json', transform: 'none', contentType: 'application/json' };
  for (const r of ranges) {
    const f = formatFor(r, allowTransforms, cbor);
    if (f) return f;
  }
  throw ApiError.notAcceptable(`only the following media types are accepted: ${cbor ? SUPPORTED_WITH_CBOR : SUPPORTED}`);
}
