import type http from 'node:http';
import https from 'node:https';
import { adminIdentity, type ClientIdentity, identityHeaders } from '../../support/credentials.js';

/** One decoded watch event. */
export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  object: any;
}

/**
 * A raw HTTP watch for tests: one connection per watch, events decoded
 * line by line as they arrive, with helpers that wait for the next events
 * or assert that none arrive.
 */
export class WatchClient {
  readonly events: WatchEvent[] = [];
  /** Raw body text received (for non-JSON formats). */
  raw = '';
  status = 0;
  headers: http.IncomingHttpHeaders = {};
  /** Resolves when the server ends the stream (cleanly or not). */
  readonly ended: Promise<void>;
  endedCleanly = false;
  private read = 0;
  private buffer = '';
  private waiters: (() => void)[] = [];
  private req: http.ClientRequest | undefined;
  private res: http.IncomingMessage | undefined;
  private markEnded!: () => void;

  private constructor(private readonly decode: boolean) {
    this.ended = new Promise((r) => (this.markEnded = r));
  }

  /**
   * Opens `path` on `base` (HTTPS, HTTP/1.1, a connection of its own) as
   * `id` (default: the platform administrator) and resolves once the
   * response headers arrived.
   */
  static open(base: string, path: string, headers: Record<string, string> = {}, decode = true, id: ClientIdentity = adminIdentity()): Promise<WatchClient> {
    const w = new WatchClient(decode);
    return new Promise((resolve, reject) => {
      const tls = { ca: id.caPem, cert: id.certPem, key: id.keyPem };
      const req = https.get(new URL(path, base), { headers: { ...identityHeaders(id), ...headers }, agent: false, ...tls }, (res) => {
        w.res = res;
        w.status = res.statusCode ?? 0;
        w.headers = res.headers;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => w.onData(chunk));
        res.on('end', () => {
          w.endedCleanly = true;
          w.finish();
        });
        res.on('close', () => w.finish());
        res.on('error', () => w.finish());
        resolve(w);
      });
      w.req = req;
      req.on('error', (err) => {
        w.finish();
        reject(err);
      });
    });
  }

  /** Opens a watch on `path` (adding `watch=true`). */
  static watch(base: string, path: string, headers: Record<string, string> = {}, id?: ClientIdentity): Promise<WatchClient> {
    return WatchClient.open(base, path + (path.includes('?') ? '&' : '?') + 'watch=true', headers, true, id);
  }

  /** True once the stream ended. */
  get isEnded(): boolean {
    return this.done;
  }
  private done = false;

  /** Waits for the next unread event. */
  async next(timeoutMs = 5000): Promise<WatchEvent> {
    const deadline = Date.now() + timeoutMs;
    while (this.read >= this.events.length) {
      if (this.done) throw new Error(`watch ended after ${this.events.length} events`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no watch event within ${timeoutMs} ms (got ${this.events.length})`);
      await this.wait(left);
    }
    return this.events[this.read++];
  }

  /** Waits for the next `n` unread events. */
  async take(n: number, timeoutMs = 5000): Promise<WatchEvent[]> {
    const out: WatchEvent[] = [];
    const deadline = Date.now() + timeoutMs;
    for (let i = 0; i < n; i++) out.push(await this.next(Math.max(1, deadline - Date.now())));
    return out;
  }

  /** Waits for the next event that is not a BOOKMARK. */
  async nextChange(timeoutMs = 5000): Promise<WatchEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const e = await this.next(Math.max(1, deadline - Date.now()));
      if (e.type !== 'BOOKMARK') return e;
    }
  }

  /** Resolves with the unread events after `ms` (no waiting for more). */
  async drainFor(ms: number): Promise<WatchEvent[]> {
    await new Promise((r) => setTimeout(r, ms));
    const out = this.events.slice(this.read);
    this.read = this.events.length;
    return out;
  }

  /** Waits until the stream ends or `timeoutMs` passes; true when it ended. */
  async waitEnd(timeoutMs = 5000): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const r = await Promise.race([this.ended.then(() => true), new Promise<boolean>((res) => (timer = setTimeout(() => res(false), timeoutMs)))]);
    clearTimeout(timer);
    return r;
  }

  /** Closes the connection. */
  close(): void {
    this.req?.destroy();
    this.res?.destroy();
  }

  private onData(chunk: string): void {
    this.raw += chunk;
    if (this.decode) {
      this.buffer += chunk;
      let nl: number;
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        if (line.trim()) this.events.push(JSON.parse(line) as WatchEvent);
      }
    }
    this.wake();
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.markEnded();
    this.wake();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      this.waiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }
}
