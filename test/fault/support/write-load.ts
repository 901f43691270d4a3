import http from 'node:http';
import https from 'node:https';
import { adminIdentity } from '../../support/credentials.js';
/** What one request of a {@link WriteLoad} got. */
export interface LoadOutcome {
  /** The HTTP status, or 0 when the request failed without an answer (reset, refused, timed out). */
  status: number;
  /** `kind` of a JSON body ('Status' for errors). */
  kind?: string;
  reason?: string;
  /** The transport error when status is 0. */
  error?: string;
  /**
   * With fresh connections, how far a failed request got: `connect` (no
   * connection: nothing was sent), `tls` (connected, handshake unfinished),
   * `sent` (the request was written, no complete answer came).
   */
  stage?: 'connect' | 'tls' | 'sent';
  name: string;
  resourceVersion?: string;
  /** When the answer arrived (ms since the epoch). */
  at: number;
}

/**
 * Creates configmaps with unique names in namespace `namespace`, from
 * `concurrency` loops spread over `urls`, until stopped; every outcome is
 * kept. A request with no answer within `timeoutMs` counts as a hang
 * (status 0).
 */
export class WriteLoad {
  readonly outcomes: LoadOutcome[] = [];
  private stopped = false;
  private readonly loops: Promise<void>[] = [];
  private seq = 0;

  constructor(
    private readonly urls: string[],
    private readonly namespace: string,
    concurrency = 4,
    private readonly timeoutMs = 15_000,
    /** A new TCP connection per request (no keep-alive reuse races when a server closes). */
    private readonly freshConnections = false,
  ) {
    for (let i = 0; i < concurrency; i++) this.loops.push(this.loop(i));
  }

  /** Outcomes that arrived after `since` (ms since the epoch). */
  since(since: number): LoadOutcome[] {
    return this.outcomes.filter((o) => o.at >= since);
  }

  /** Stops every loop and waits for their last requests. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  private async loop(i: number): Promise<void> {
    while (!this.stopped) {
      const url = this.urls[(i + this.seq) % this.urls.length];
      const name = `load-${i}-${this.seq++}`;
      this.outcomes.push(await this.createOne(url, name));
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  private async createOne(url: string, name: string): Promise<LoadOutcome> {
    if (this.freshConnections) return this.createFresh(url, name);
    try {
      const res = await fetch(`${url}/api/v1/namespaces/${this.namespace}/configmaps`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ metadata: { name }, data: { n: name } }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const body = (await res.json().catch(() => ({}))) as { kind?: string; reason?: string; metadata?: { resourceVersion?: string } };
      return { status: res.status, kind: body.kind, reason: body.reason, name, resourceVersion: body.metadata?.resourceVersion, at: Date.now() };
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      return { status: 0, error: e.cause?.code ?? e.name ?? e.message, name, at: Date.now() };
    }
  }

  private createFresh(url: string, name: string): Promise<LoadOutcome> {
    const body = JSON.stringify({ metadata: { name }, data: { n: name } });
    return new Promise((resolve) => {
      // A fresh connection per request presents the platform administrator's certificate itself
      // (agent: false bypasses the global agent that carries the default credentials).
      const secure = url.startsWith('https:');
      const id = secure ? adminIdentity() : undefined;
      const req = (secure ? https : http).request(
        `${url}/api/v1/namespaces/${this.namespace}/configmaps`,
        { method: 'POST', agent: false, headers: { 'content-type': 'application/json' }, timeout: this.timeoutMs, ca: id?.caPem, cert: id?.certPem, key: id?.keyPem },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (text += d));
          res.on('error', (err: NodeJS.ErrnoException) => resolve({ status: 0, error: err.code ?? err.message, stage: 'sent', name, at: Date.now() }));
          res.on('end', () => {
            let parsed: { kind?: string; reason?: string; metadata?: { resourceVersion?: string } } = {};
            try {
              parsed = JSON.parse(text);
            } catch {
              // not JSON
            }
            resolve({ status: res.statusCode ?? 0, kind: parsed.kind, reason: parsed.reason, name, resourceVersion: parsed.metadata?.resourceVersion, at: Date.now() });
          });
        },
      );
      let stage: LoadOutcome['stage'] = 'connect';
      req.on('socket', (socket) => {
        socket.once('connect', () => (stage = secure ? 'tls' : 'sent'));
        socket.once('secureConnect', () => (stage = 'sent'));
      });
      req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
      req.on('error', (err: NodeJS.ErrnoException) => resolve({ status: 0, error: err.code ?? err.message, stage, name, at: Date.now() }));
      req.end(body);
    });
  }
}
