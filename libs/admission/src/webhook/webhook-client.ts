import { LRUCache } from 'lru-cache';
import { createHash } from 'node:crypto';
import { Pool } from 'undici';
import { EgressRefusedError, type WebhookEgressPolicy } from './egress-policy.js';
import type { CallFailureKind } from './webhook-errors.js';

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };

/** Where and how to POST one AdmissionReview. */
export interface WebhookTarget {
  /** The full URL including `?timeout=Ns`. */
  url: URL;
  /** TLS server name to verify; default: the URL's host. */
  servername?: string;
  /** Base64 of a PEM CA bundle; empty or undefined: the system roots. */
  caBundle?: string | null;
  /**
   * The egress policy and the calling tenant, for tenant-supplied URLs:
   * the host is checked before connecting and every resolved address
   * before it is used. Unset: no check (operator-configured addresses).
   */
  egress?: { policy: WebhookEgressPolicy; tenant: string };
}

/** An HTTP answer of a webhook. */
export interface WebhookHttpResponse {
  status: number;
  body: string;
}

/** A transport-level failure, with Go's wording where kube-apiserver users know it. */
export class WebhookTransportError extends Error {
  constructor(
    message: string,
    readonly kind: CallFailureKind,
  ) {
    super(message);
  }
}

/** Options of {@link WebhookClient}. */
export interface WebhookClientOptions {
  /** At most this many connection pools are kept (least recently used are closed). Default 256. */
  maxPools?: number;
  /** Connections per pool. Default 128. */
  connectionsPerPool?: number;
  /** Larger responses are a call failure. Default 16 MiB. */
  maxResponseBytes?: number;
}

const UNKNOWN_AUTHORITY = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
]);

/**
 * What an untrusted tenant is told of a transport failure: the same words
 * whether the port was closed, filtered or answered with something else,
 * so webhooks cannot be used to map a network.
 */
export const OPAQUE_TRANSPORT_FAILURE = 'the webhook could not be reached (connection or TLS failure)';

/** Go's texts for the common failures (so messages read like kube-apiserver's); Node's message otherwise. */
function describe(err: unknown, url: URL): string {
  const e = err as { code?: string; message?: string };
  if (err instanceof EgressRefusedError) return err.message;
  const host = url.host;
  if (e.code && UNKNOWN_AUTHORITY.has(e.code)) return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
  if (e.code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `tls: failed to verify certificate: x509: ${e.message}`;
  if (e.code === 'CERT_HAS_EXPIRED') return 'tls: failed to verify certificate: x509: certificate has expired or is not yet valid';
  if (e.code === 'ECONNREFUSED') return `dial tcp ${host}: connect: connection refused`;
  if (e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN') return `dial tcp: lookup ${url.hostname}: no such host`;
  if (e.code === 'UND_ERR_SOCKET' || e.code === 'ECONNRESET') return 'EOF';
  return e.message ?? String(err);
}

/**
 * The HTTPS client of the webhook modules: one undici connection pool per
 * (origin, TLS server name, CA bundle), reused across calls and webhooks
 * (keep-alive), TLS always verified. Every call has a hard deadline
 * (AbortSignal) so a hanging webhook never holds a request longer than its
 * timeout.
 */
export class WebhookClient {
  /** Pools by target; the least recently used beyond `maxPools` is closed. */
  private readonly pools: LRUCache<string, Pool>;
  private readonly connections: number;
  private readonly maxResponseBytes: number;

  constructor(opts: WebhookClientOptions = {}) {
    this.pools = new LRUCache<string, Pool>({
      max: opts.maxPools ?? 256,
      dispose: (pool, _key, reason) => {
        if (reason === 'evict') pool.close().catch(() => undefined);
      },
    });
    this.connections = opts.connectionsPerPool ?? 128;
    this.maxResponseBytes = opts.maxResponseBytes ?? 16 * 1024 * 1024;
  }

  private pool(t: WebhookTarget): Pool {
    const ca = t.caBundle ?? '';
    const egress = t.egress ? (t.egress.policy.trusts(t.egress.tenant) ? 'trusted' : 'checked') : 'operator';
    const key = `${t.url.origin}|${t.servername ?? ''}|${ca ? createHash('sha256').update(ca).digest('hex') : ''}|${egress}`;
    const existing = this.pools.get(key);
    if (existing) return existing;
    const connect: Record<string, unknown> = { rejectUnauthorized: true };
    if (ca) connect.ca = Buffer.from(ca, 'base64').toString('utf8');
    if (t.servername) connect.servername = t.servername;
    // Names are resolved and checked here, and the connection goes to the checked address.
    if (t.egress) connect.lookup = t.egress.policy.lookupFor(t.egress.tenant);
    const pool = new Pool(t.url.origin, { connections: this.connections, pipelining: 1, keepAliveTimeout: 30_000, connect });
    this.pools.set(key, pool);
    return pool;
  }

  /**
   * POSTs `body` (JSON) to the target and returns status and body text.
   * Throws WebhookTransportError: kind `timeout` with "context deadline
   * exceeded" after `timeoutMs`, `transport` for connection/TLS failures,
   * `response` for an oversized answer. `headers` are sent besides the
   * content type (the caller's trace context, `traceparent`).
   */
  async post(target: WebhookTarget, body: string, timeoutMs: number, headers?: Record<string, string>): Promise<WebhookHttpResponse> {
    if (target.egress) {
      const refusal = target.egress.policy.hostRefusal(target.egress.tenant, target.url.hostname);
      if (refusal) throw new WebhookTransportError(new EgressRefusedError(refusal).message, 'config');
    }
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      return await this.attempt(target, body, timeoutMs, signal, headers);
    } catch (err) {
      // A kept-alive connection the webhook closed just as it was reused: try once more on a fresh one.
      const code = (err as { code?: string }).code;
      if (signal.aborted || (code !== 'UND_ERR_SOCKET' && code !== 'ECONNRESET')) throw this.describeFailure(err, target, signal);
      try {
        return await this.attempt(target, body, timeoutMs, signal, headers);
      } catch (retryErr) {
        throw this.describeFailure(retryErr, target, signal);
      }
    }
  }

  private describeFailure(err: unknown, target: WebhookTarget, signal: AbortSignal): WebhookTransportError {
    if (err instanceof WebhookTransportError) return err;
    if (signal.aborted) return new WebhookTransportError('context deadline exceeded', 'timeout');
    if (err instanceof EgressRefusedError) return new WebhookTransportError(err.message, 'config');
    if (target.egress && !target.egress.policy.trusts(target.egress.tenant)) return new WebhookTransportError(OPAQUE_TRANSPORT_FAILURE, 'transport');
    return new WebhookTransportError(describe(err, target.url), 'transport');
  }

  private async attempt(target: WebhookTarget, body: string, timeoutMs: number, signal: AbortSignal, headers: Record<string, string> | undefined): Promise<WebhookHttpResponse> {
    const res = await this.pool(target).request({
      method: 'POST',
      path: `${target.url.pathname}${target.url.search}`,
      headers: headers ? { ...headers, 'content-type': 'application/json', accept: 'application/json' } : JSON_HEADERS,
      body,
      signal,
      headersTimeout: timeoutMs + 1000,
      bodyTimeout: timeoutMs + 1000,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > this.maxResponseBytes) {
        res.body.destroy();
        throw new WebhookTransportError(`response body larger than ${this.maxResponseBytes} bytes`, 'response');
      }
      chunks.push(chunk as Buffer);
    }
    return { status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') };
  }

  /** Closes every pool (server shutdown). */
  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.destroy().catch(() => undefined)));
  }
}
