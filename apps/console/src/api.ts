/** Calls to the Plinth API with the session's bearer token; every answer RBAC allows, every refusal as the server's Status. */
import type { Session } from './session.js';

/** A Kubernetes object as the console handles it. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string; labels?: Record<string, string>; managedFields?: unknown[]; deletionTimestamp?: string; creationTimestamp?: string; [k: string]: unknown };
  [k: string]: unknown;
}

/** A cause of a Status (one per field). */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** An error answer of the API, carrying its Status. */
export class ApiFailure extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly causes: StatusCause[] = [],
  ) {
    super(message);
  }
}

/** The path prefix of `tenant` (`default` is the platform scope, unprefixed); throws for a name that is no path segment. */
export function tenantPrefix(tenant: string): string {
  // `.` and `..` would be resolved by the browser (even encoded) to another path.
  if (tenant === '' || tenant === '.' || tenant === '..') throw new Error(`not a valid tenant name: ${JSON.stringify(tenant)}`);
  return tenant === 'default' ? '' : `/clusters/${encodeURIComponent(tenant)}`;
}

/** Options of one call. */
export interface CallOptions {
  method?: string;
  body?: string;
  contentType?: string;
  accept?: string;
  signal?: AbortSignal;
}

/** A client bound to one session. */
export class Api {
  constructor(readonly session: Session) {}

  /** Issues `path` (already tenant-prefixed when needed); resolves the response or throws an {@link ApiFailure}. */
  async raw(path: string, o: CallOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { Authorization: `Bearer ${this.session.token}`, Accept: o.accept ?? 'application/json' };
    if (o.contentType) headers['Content-Type'] = o.contentType;
    const res = await fetch(path, { method: o.method ?? 'GET', headers, body: o.body, signal: o.signal, cache: 'no-store' });
    if (!res.ok) throw await failureOf(res);
    return res;
  }

  /** Issues `path` and parses the JSON answer. */
  async json<T>(path: string, o: CallOptions = {}): Promise<T> {
    return (await (await this.raw(path, o)).json()) as T;
  }

  /** `path` under the session's tenant. */
  t(path: string, tenant = this.session.tenant): string {
    return `${tenantPrefix(tenant)}${path}`;
  }

  /**
   * Watches `path` (a list URL with `watch=1`) and calls `onEvent` for each
   * event until `signal` aborts; resolves when the stream ends.
   */
  async watch(path: string, accept: string, onEvent: (e: { type: string; object: unknown }) => void, signal: AbortSignal): Promise<void> {
    const res = await this.raw(path, { accept, signal });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += value;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) onEvent(JSON.parse(line) as { type: string; object: unknown });
      }
    }
  }
}

async function failureOf(res: Response): Promise<ApiFailure> {
  const text = await res.text();
  try {
    const s = JSON.parse(text) as { kind?: string; message?: string; reason?: string; details?: { causes?: StatusCause[] } };
    if (s.kind === 'Status') return new ApiFailure(res.status, s.reason ?? '', s.message ?? res.statusText, s.details?.causes ?? []);
  } catch {
    // not JSON: the text itself is the message
  }
  return new ApiFailure(res.status, res.statusText, text.slice(0, 500) || `HTTP ${res.status}`);
}

/** The message to show for any error thrown by a call. */
export function messageOf(err: unknown): string {
  if (err instanceof ApiFailure) return `${err.code} ${err.reason}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
