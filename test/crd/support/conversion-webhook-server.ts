import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TestCertificates } from '../../admission/support/webhook-server.js';

/** Backends of `group` (`clientConfig` replaces the url and caBundle): v1 (storage) `spec.hostPort: "host:port"`, v2 `spec.host` + `spec.port`, converted by the webhook at `url`. */
export function backendCrd(url: string, caBundle: string, group = 'conv.example.com', clientConfig?: Record<string, unknown>): Record<string, unknown> {
  const version = (name: string, spec: Record<string, unknown>, storage: boolean) => ({
    name,
    served: true,
    storage,
    schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: spec } } } },
  });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `backends.${group}` },
    spec: {
      group,
      names: { plural: 'backends', singular: 'backend', kind: 'Backend', listKind: 'BackendList' },
      scope: 'Namespaced',
      versions: [version('v1', { hostPort: { type: 'string' } }, true), version('v2', { host: { type: 'string' }, port: { type: 'integer' } }, false)],
      conversion: { strategy: 'Webhook', webhook: { clientConfig: clientConfig ?? { url, caBundle }, conversionReviewVersions: ['v1'] } },
    },
  };
}

/** One ConversionReview request as the webhook received it. */
export interface ConversionRequest {
  uid: string;
  desiredAPIVersion: string;
  objects: Array<Record<string, any>>;
}

/** What the test webhook does with a request. */
export type ConversionMode = 'convert' | 'drop-one' | 'wrong-uid' | 'fail';

/**
 * Converts one Backend between its two layouts: v1 `spec.hostPort:
 * "host:port"`, v2 `spec.host` + `spec.port` (an integer). Returns a new
 * object with `apiVersion` set to `desired`.
 */
export function convertBackend(obj: Record<string, any>, desired: string): Record<string, any> {
  const out = structuredClone(obj);
  const from = String(obj.apiVersion).split('/')[1];
  const to = desired.split('/')[1];
  out.apiVersion = desired;
  if (from === to) return out;
  const spec = { ...(obj.spec ?? {}) };
  if (to === 'v2') {
    const [host, port] = String(spec.hostPort ?? ':').split(':');
    delete spec.hostPort;
    spec.host = host;
    if (port) spec.port = Number(port);
  } else {
    spec.hostPort = `${spec.host ?? ''}:${spec.port ?? ''}`;
    delete spec.host;
    delete spec.port;
  }
  out.spec = spec;
  return out;
}

/**
 * A conversion webhook for tests: HTTPS with a certificate of the test CA,
 * ConversionReview v1 at any path, converting Backends (or misbehaving per
 * {@link mode}); records every request.
 */
export class ConversionWebhookServer {
  readonly requests: ConversionRequest[] = [];
  mode: ConversionMode = 'convert';

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly record: boolean,
  ) {}

  /** Starts on `port` (0: a free one) of 127.0.0.1; `record: false` keeps no request log (benchmarks). */
  static async start(certs: TestCertificates, port = 0, opts: { record?: boolean } = {}): Promise<ConversionWebhookServer> {
    let self: ConversionWebhookServer | undefined;
    const server = createServer({ key: certs.keyPem, cert: certs.certPem }, (req, res) => void self?.handle(req, res));
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    const address = server.address();
    self = new ConversionWebhookServer(server, typeof address === 'object' && address ? address.port : 0, opts.record ?? true);
    return self;
  }

  /** `https://127.0.0.1:<port>/convert`. */
  get url(): string {
    return `https://127.0.0.1:${this.port}/convert`;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: ConversionRequest };
    const r = review.request;
    if (this.record) this.requests.push(r);
    let converted = r.objects.map((o) => convertBackend(o, r.desiredAPIVersion));
    if (this.mode === 'drop-one') converted = converted.slice(1);
    const response: Record<string, unknown> =
      this.mode === 'fail'
        ? { uid: r.uid, result: { status: 'Failure', message: 'cannot convert this backend' } }
        : { uid: this.mode === 'wrong-uid' ? 'not-the-uid' : r.uid, convertedObjects: converted, result: { status: 'Success' } };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response }));
  }

  /** Stops, cutting kept-alive connections. */
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
