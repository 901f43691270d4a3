import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { TestCertificates } from '../../admission/support/webhook-server.js';

/** A SubjectAccessReview as the webhook received it. */
export interface ReceivedReview {
  path: string;
  /** The Authorization header the server presented (a kubeconfig user's token). */
  authorization?: string;
  apiVersion: string;
  kind: string;
  spec: {
    user?: string;
    groups?: string[];
    group?: string[];
    extra?: Record<string, string[]>;
    resourceAttributes?: Record<string, any>;
    nonResourceAttributes?: { path: string; verb: string };
  };
}

/** What a route answers: a status (allowed/denied/reason), or 'hang' (never answers). */
export type SarAnswer = { allowed?: boolean; denied?: boolean; reason?: string } | 'hang';

/** An HTTPS authorization webhook for tests: routes by path, records every review, answers as told. */
export class SarWebhookServer {
  readonly reviews: ReceivedReview[] = [];
  private readonly routes = new Map<string, (r: ReceivedReview) => SarAnswer>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** Starts on a free loopback port serving `certs`' server certificate. */
  static async start(certs: TestCertificates): Promise<SarWebhookServer> {
    let self: SarWebhookServer | undefined;
    const server = createServer({ key: certs.keyPem, cert: certs.certPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ReceivedReview;
        const review: ReceivedReview = { path: (req.url ?? '/').split('?')[0], authorization: req.headers.authorization, apiVersion: body.apiVersion, kind: body.kind, spec: body.spec };
        self!.reviews.push(review);
        const route = self!.routes.get(review.path);
        const answer = route ? route(review) : {};
        if (answer === 'hang') return;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: body.apiVersion, kind: 'SubjectAccessReview', status: { allowed: false, ...answer } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const address = server.address();
    self = new SarWebhookServer(server, typeof address === 'object' && address ? address.port : 0);
    return self;
  }

  /** `https://127.0.0.1:<port><path>`. */
  url(p: string): string {
    return `https://127.0.0.1:${this.port}${p}`;
  }

  /** Answers reviews POSTed to `p` with `answer`. */
  on(p: string, answer: (r: ReceivedReview) => SarAnswer): this {
    this.routes.set(p, answer);
    return this;
  }

  /** The reviews POSTed to `p`. */
  reviewsTo(p: string): ReceivedReview[] {
    return this.reviews.filter((r) => r.path === p);
  }

  /** Writes a kubeconfig for the webhook at `p` (its CA; the user's `token` if given) to `file`; returns `file`. */
  writeKubeconfig(file: string, p: string, caPem: string, token?: string): string {
    const ca = Buffer.from(caPem).toString('base64');
    writeFileSync(
      file,
      `apiVersion: v1\nkind: Config\nclusters:\n- name: webhook\n  cluster:\n    server: ${this.url(p)}\n    certificate-authority-data: ${ca}\nusers:\n- name: apiserver\n  user: ${token ? `{token: ${token}}` : '{}'}\ncontexts:\n- name: webhook\n  context: {cluster: webhook, user: apiserver}\ncurrent-context: webhook\n`,
    );
    return file;
  }

  /** Stops, cutting hanging calls. */
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
