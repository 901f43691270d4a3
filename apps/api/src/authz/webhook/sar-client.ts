import type { WebhookEgressPolicy } from '@plinth/admission';
import { Agent } from 'undici';
import type { WebhookConnection } from '../config/webhook-kubeconfig.js';

/** A call that did not produce an answer: `timeout` past the deadline, else `error`. */
export class SarCallError extends Error {
  constructor(
    message: string,
    readonly kind: 'timeout' | 'error',
  ) {
    super(message);
  }
}

/** The webhook's decision. */
export interface SarStatus {
  allowed: boolean;
  denied: boolean;
  reason: string;
  evaluationError: string;
}

/** Larger answers are refused (a SubjectAccessReview answer is a few hundred bytes). */
const MAX_RESPONSE_BYTES = 1024 * 1024;
/** Upstream's DefaultAuthWebhookRetryBackoff: 500 ms, ×1.5, 5 attempts, all within the call's timeout. */
const BACKOFF = { initialMs: 500, factor: 1.5, steps: 5 };

/** The egress policy a tenant's webhook is held to (unset: an operator's webhook, not checked). */
export interface SarEgress {
  policy: WebhookEgressPolicy;
  tenant: string;
}

function transportText(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.cause?.code ?? e.code;
  if (code === 'EGRESS_REFUSED') return e.cause?.message ?? e.message ?? 'refused by the webhook egress policy';
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/.test(code)) return `tls: failed to verify certificate: ${e.cause?.message ?? e.message}`;
  return e.cause?.message ?? e.message ?? String(err);
}

/**
 * POSTs SubjectAccessReviews to one webhook (the URL of its kubeconfig,
 * verbatim) over HTTPS, TLS always verified against the kubeconfig's CA,
 * with its client certificate or bearer token; keeps connections alive.
 * Retries connection failures and 429/5xx answers with upstream's backoff
 * until the call's deadline. For a tenant's webhook, the host and every
 * resolved address are checked against the egress policy.
 */
export class SarClient {
  private readonly agent: Agent;

  constructor(
    private readonly conn: WebhookConnection,
    private readonly egress?: SarEgress,
  ) {
    const connect: Record<string, unknown> = { rejectUnauthorized: true };
    if (conn.ca) connect.ca = conn.ca;
    if (conn.cert) connect.cert = conn.cert;
    if (conn.key) connect.key = conn.key;
    if (conn.servername) connect.servername = conn.servername;
    if (egress) connect.lookup = egress.policy.lookupFor(egress.tenant);
    this.agent = new Agent({ connect, keepAliveTimeout: 30_000, connections: 64 });
  }

  /** Sends `review` and returns the status of the webhook's answer. Throws SarCallError. */
  async review(review: Record<string, unknown>, timeoutMs: number): Promise<SarStatus> {
    if (this.egress) {
      const refusal = this.egress.policy.hostRefusal(this.egress.tenant, this.conn.url.hostname);
      if (refusal) throw new SarCallError(`the webhook egress policy does not allow ${refusal} addresses`, 'error');
    }
    const deadline = Date.now() + timeoutMs;
    const signal = AbortSignal.timeout(timeoutMs);
    const body = JSON.stringify(review);
    let wait = BACKOFF.initialMs;
    for (let attempt = 1; ; attempt++) {
      let retriable: string;
      try {
        const res = await this.agent.request({
          origin: this.conn.url.origin,
          path: `${this.conn.url.pathname}${this.conn.url.search}`,
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json', ...(this.conn.token ? { authorization: `Bearer ${this.conn.token}` } : {}) },
          body,
          signal,
        });
        const text = await readLimited(res.body);
        if (res.statusCode === 429 || res.statusCode >= 500) retriable = `the server responded with status ${res.statusCode}`;
        else if (res.statusCode < 200 || res.statusCode > 299) throw new SarCallError(`the server responded with status ${res.statusCode}: ${text.slice(0, 256)}`, 'error');
        else return statusOf(text);
      } catch (err) {
        if (err instanceof SarCallError) throw err;
        if (signal.aborted) throw new SarCallError('context deadline exceeded', 'timeout');
        if ((err as { cause?: { code?: string } }).cause?.code === 'EGRESS_REFUSED' || (err as { code?: string }).code === 'EGRESS_REFUSED') throw new SarCallError(transportText(err), 'error');
        retriable = transportText(err);
      }
      if (attempt >= BACKOFF.steps || Date.now() + wait >= deadline) throw new SarCallError(retriable, 'error');
      await new Promise((r) => setTimeout(r, wait * (1 + Math.random() * 0.2)));
      wait *= BACKOFF.factor;
    }
  }

  /** Closes the connections. */
  async close(): Promise<void> {
    await this.agent.close().catch(() => undefined);
  }
}

async function readLimited(body: AsyncIterable<Buffer | Uint8Array> & { destroy?: () => void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of body) {
    size += c.length;
    if (size > MAX_RESPONSE_BYTES) {
      body.destroy?.();
      throw new SarCallError(`response body larger than ${MAX_RESPONSE_BYTES} bytes`, 'error');
    }
    chunks.push(Buffer.from(c));
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The `status` of a SubjectAccessReview answer; an answer that is not one is an error. */
function statusOf(text: string): SarStatus {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new SarCallError('the webhook answered with something that is not JSON', 'error');
  }
  const o = parsed as { kind?: unknown; status?: Record<string, unknown> };
  if (typeof o !== 'object' || o === null || (o.kind !== undefined && o.kind !== 'SubjectAccessReview')) throw new SarCallError('the webhook did not answer with a SubjectAccessReview', 'error');
  const s = typeof o.status === 'object' && o.status !== null ? o.status : {};
  return { allowed: s.allowed === true, denied: s.denied === true, reason: typeof s.reason === 'string' ? s.reason : '', evaluationError: typeof s.evaluationError === 'string' ? s.evaluationError : '' };
}
