import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { encodeOpenApiV2Proto } from '../openapi/openapi-v2-proto.encoder.js';
import { buildOpenApiV2 } from '../openapi/openapi-v2.builder.js';
import { buildOpenApiV3, buildOpenApiV3Index } from '../openapi/openapi-v3.builder.js';
import { groupVersion } from '../registry/resource-definition.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import { PLINTH_VERSION } from './version.js';

/** A rendered document with its ETag. */
export interface RenderedDocument {
  body: string | Uint8Array;
  etag: string;
}

function etagOf(data: string | Uint8Array): string {
  return `"${createHash('sha512').update(data).digest('hex').slice(0, 32).toUpperCase()}"`;
}

/**
 * Serves OpenAPI v2 (JSON and gnostic protobuf) and v3 (index and one
 * document per group-version), built from the registry and cached until the
 * tenant's set of served resources changes.
 */
export class OpenApiDocumentsService {
  /** Rendered documents by tenant, resource-set signature and format; the least recently used go first. */
  private readonly cache = new LRUCache<string, RenderedDocument>({ max: 500 });

  constructor(private readonly registry: ResourceRegistry) {}

  private signature(tenant: string): string {
    return createHash('sha1').update(this.registry.signature(tenant)).digest('hex');
  }

  private cached(key: string, build: () => string | Uint8Array): RenderedDocument {
    let doc = this.cache.get(key);
    if (!doc) {
      const body = build();
      doc = { body, etag: etagOf(body) };
      this.cache.set(key, doc);
    }
    return doc;
  }

  /** `/openapi/v2` as JSON. */
  v2Json(tenant: string): RenderedDocument {
    return this.cached(`${tenant}|${this.signature(tenant)}|v2json`, () =>
      JSON.stringify(buildOpenApiV2(this.registry.all(tenant), { title: 'Kubernetes', version: PLINTH_VERSION.gitVersion })),
    );
  }

  /** `/openapi/v2` as gnostic protobuf. */
  v2Proto(tenant: string): RenderedDocument {
    return this.cached(`${tenant}|${this.signature(tenant)}|v2proto`, () =>
      encodeOpenApiV2Proto(buildOpenApiV2(this.registry.all(tenant), { title: 'Kubernetes', version: PLINTH_VERSION.gitVersion })),
    );
  }

  /** The group-versions served to a tenant. */
  groupVersions(tenant: string): string[] {
    return [...new Set(this.registry.all(tenant).map((d) => groupVersion(d)))].sort();
  }

  /** One v3 group-version document, or undefined when `gv` is not served. */
  v3(tenant: string, gv: string): RenderedDocument | undefined {
    if (!this.groupVersions(tenant).includes(gv)) return undefined;
    return this.cached(`${tenant}|${this.signature(tenant)}|v3|${gv}`, () => JSON.stringify(buildOpenApiV3(this.registry.all(tenant), gv)));
  }

  /** `/openapi/v3`: the index, each entry carrying its document's hash. */
  v3Index(tenant: string): RenderedDocument {
    return this.cached(`${tenant}|${this.signature(tenant)}|v3index`, () =>
      JSON.stringify(buildOpenApiV3Index(this.groupVersions(tenant), (gv) => this.v3(tenant, gv)!.etag.replace(/"/g, ''))),
    );
  }
}
