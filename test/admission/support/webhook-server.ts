import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { eventually } from '../../support/eventually.js';

const run = promisify(execFile);

/** A throw-away CA and a server certificate it signed. */
export interface TestCertificates {
  /** PEM of the CA certificate. */
  caPem: string;
  /** base64 of the CA PEM: a webhook's `caBundle`. */
  caBundle: string;
  certPem: string;
  keyPem: string;
}

/**
 * Generates a CA and a server certificate (P-256, valid one day) with the
 * openssl CLI. The server certificate is valid for 127.0.0.1, localhost
 * and the in-cluster names of `services` (`name.namespace.svc`).
 */
export async function makeCertificates(services: string[] = []): Promise<TestCertificates> {
  const dir = await mkdtemp(path.join(tmpdir(), 'plinth-webhook-ca-'));
  try {
    const f = (n: string) => path.join(dir, n);
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    await run('openssl', ['req', '-x509', ...ec, '-keyout', f('ca.key'), '-out', f('ca.crt'), '-days', '1', '-subj', '/CN=plinth-test-ca',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    await run('openssl', ['req', ...ec, '-keyout', f('server.key'), '-out', f('server.csr'), '-subj', '/CN=webhook']);
    const sans = ['IP:127.0.0.1', 'DNS:localhost', ...services.map((s) => `DNS:${s}`)].join(',');
    await writeFile(f('ext.cnf'), `subjectAltName=${sans}\nextendedKeyUsage=serverAuth\n`);
    await run('openssl', ['x509', '-req', '-in', f('server.csr'), '-CA', f('ca.crt'), '-CAkey', f('ca.key'), '-CAcreateserial',
      '-out', f('server.crt'), '-days', '1', '-extfile', f('ext.cnf')]);
    const caPem = await readFile(f('ca.crt'), 'utf8');
    return { caPem, caBundle: Buffer.from(caPem).toString('base64'), certPem: await readFile(f('server.crt'), 'utf8'), keyPem: await readFile(f('server.key'), 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The `request` of an AdmissionReview as a webhook receives it. */
export interface ReviewRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  requestKind?: { group: string; version: string; kind: string };
  requestResource?: { group: string; version: string; resource: string };
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  operation: string;
  userInfo: { username?: string; groups?: string[] };
  object: any;
  oldObject: any;
  dryRun: boolean;
  options: any;
}

/** What a handler answers: an AdmissionResponse body (uid filled in), a raw HTTP answer, or nothing (hang). */
export type HandlerAnswer =
  | { response: Record<string, unknown>; apiVersion?: string }
  | { raw: string; status?: number }
  | 'hang';

/** A route of the test webhook. */
export type WebhookHandler = (req: ReviewRequest, review: { apiVersion: string }) => HandlerAnswer | Promise<HandlerAnswer>;

/** One call the server received. */
export interface RecordedCall {
  path: string;
  query: string;
  apiVersion: string;
  request: ReviewRequest;
  /** The HTTP request's headers (`traceparent` with tracing on). */
  headers: IncomingHttpHeaders;
  /** Set once the handler has answered (false while it is still working, or forever for 'hang'). */
  answered: boolean;
}

/** base64 of a JSON patch, for `response.patch`. */
export function patchOf(ops: unknown[]): string {
  return Buffer.from(JSON.stringify(ops)).toString('base64');
}

/** An allowed answer. */
export const allow = (extra: Record<string, unknown> = {}): HandlerAnswer => ({ response: { allowed: true, ...extra } });

/** A denial with `message` (and optional code). */
export const deny = (message: string, code?: number): HandlerAnswer => ({ response: { allowed: false, status: { message, ...(code ? { code } : {}) } } });

/** A JSON-patch answer. */
export const patch = (ops: unknown[], extra: Record<string, unknown> = {}): HandlerAnswer => ({
  response: { allowed: true, patchType: 'JSONPatch', patch: patchOf(ops), ...extra },
});

/** An HTTPS admission webhook for tests: routes by path, records every call. */
export class TestWebhookServer {
  readonly calls: RecordedCall[] = [];
  private readonly routes = new Map<string, WebhookHandler>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly record: boolean,
  ) {}

  /** Starts on a free loopback port with `certs`; `record: false` keeps no call log (benchmarks). */
  static async start(certs: TestCertificates, opts: { record?: boolean } = {}): Promise<TestWebhookServer> {
    let self: TestWebhookServer | undefined;
    const server = createServer({ key: certs.keyPem, cert: certs.certPem }, (req, res) => void self?.handle(req, res));
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    self = new TestWebhookServer(server, typeof address === 'object' && address ? address.port : 0, opts.record ?? true);
    return self;
  }

  /** `https://127.0.0.1:<port><path>`. */
  url(p: string): string {
    return `https://127.0.0.1:${this.port}${p}`;
  }

  /** Serves `handler` at `p` (replacing an earlier one). */
  on(p: string, handler: WebhookHandler): this {
    this.routes.set(p, handler);
    return this;
  }

  /** Calls recorded for `p`. */
  callsTo(p: string): RecordedCall[] {
    return this.calls.filter((c) => c.path === p);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const [p, query = ''] = (req.url ?? '/').split('?');
    const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { apiVersion: string; request: ReviewRequest };
    const call: RecordedCall = { path: p, query, apiVersion: review.apiVersion, request: review.request, headers: req.headers, answered: false };
    if (this.record) this.calls.push(call);
    const handler = this.routes.get(p);
    const answer: HandlerAnswer = handler ? await handler(review.request, review) : { raw: 'no such route', status: 404 };
    call.answered = answer !== 'hang';
    if (answer === 'hang') return;
    if ('raw' in answer) {
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' }).end(answer.raw);
      return;
    }
    const body = {
      apiVersion: answer.apiVersion ?? review.apiVersion,
      kind: 'AdmissionReview',
      response: { uid: review.request.uid, ...answer.response },
    };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }

  /** Stops, cutting hanging calls. */
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Options of one webhook in {@link webhookConfiguration}. */
export interface HookOptions {
  name: string;
  /** URL (from TestWebhookServer.url) or a service reference. */
  url?: string;
  service?: { namespace: string; name: string; path?: string; port?: number };
  caBundle?: string | null;
  operations?: string[];
  resources?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  scope?: string;
  [extra: string]: unknown;
}

/** A Mutating- or ValidatingWebhookConfiguration body with sensible test defaults (sideEffects None, v1). */
export function webhookConfiguration(kind: 'Mutating' | 'Validating', name: string, hooks: HookOptions[], labels?: Record<string, string>): Record<string, unknown> {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: `${kind}WebhookConfiguration`,
    metadata: { name, ...(labels ? { labels } : {}) },
    webhooks: hooks.map(({ name: hookName, url, service, caBundle, operations, resources, apiGroups, apiVersions, scope, ...rest }) => ({
      name: hookName,
      clientConfig: { ...(url ? { url } : {}), ...(service ? { service } : {}), ...(caBundle ? { caBundle } : {}) },
      rules: [
        {
          operations: operations ?? ['CREATE'],
          apiGroups: apiGroups ?? [''],
          apiVersions: apiVersions ?? ['v1'],
          resources: resources ?? ['configmaps'],
          ...(scope ? { scope } : {}),
        },
      ],
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      ...rest,
    })),
  };
}
