import http2 from 'node:http2';
import { performance } from 'node:perf_hooks';
import tls from 'node:tls';
import { benchTls, progress } from './bench-support.js';

// The watchers of the watch benchmark (bench/watch.bench.ts).

const MARK = Buffer.from('"name":"w-');
/** Every watcher socket reads into this one buffer: each read is handled before the next one starts. */
const READ_BUFFER = Buffer.allocUnsafe(256 * 1024);

/**
 * Watchers on one server: raw HTTP/1.1 streams over TLS whose data handler
 * only looks for the sequence number of the bench object in the chunk and
 * stamps its arrival, so the client adds as little as possible to what is
 * measured.
 */
export class WatcherPool {
  readonly sockets: tls.TLSSocket[] = [];
  private readonly sessions: http2.ClientHttp2Session[] = [];
  private arrivals = new Map<number, number[]>();
  private expected = 0;
  private waiting: { seq: number; resolve: () => void } | undefined;

  async open(base: string, path: string, n: number, batch = 250): Promise<void> {
    for (let i = 0; i < n; i += batch) {
      const k = Math.min(batch, n - i);
      await Promise.all(Array.from({ length: k }, () => this.openOne(base, path)));
      if (n >= 2000 && (i / batch) % 8 === 0) progress(`  ${Math.min(i + k, n)}/${n} watchers open`);
    }
    this.expected += n;
  }

  /**
   * Opens `n` watches as HTTP/2 streams, `perSession` per TLS connection, as
   * client-go multiplexes a process's watches over one connection; each
   * stream's data is stamped as a raw watcher's.
   */
  async openH2(base: string, path: string, n: number, perSession: number): Promise<void> {
    const creds = await benchTls();
    for (let opened = 0; opened < n; opened += perSession) {
      const session = http2.connect(base, { ...creds, peerMaxConcurrentStreams: perSession });
      session.on('error', () => undefined);
      this.sessions.push(session);
      const k = Math.min(perSession, n - opened);
      await Promise.all(
        Array.from(
          { length: k },
          () =>
            new Promise<void>((resolve, reject) => {
              const stream = session.request({ ':method': 'GET', ':path': path, accept: 'application/json' });
              stream.on('response', (headers) => (headers[':status'] === 200 ? resolve() : reject(new Error(`watch answered ${headers[':status']}`))));
              stream.on('data', (chunk: Buffer) => this.onData(chunk));
              stream.on('error', reject);
              stream.end();
            }),
        ),
      );
    }
    this.expected += n;
  }

  private async openOne(base: string, path: string): Promise<void> {
    const url = new URL(path, base);
    const creds = await benchTls();
    return new Promise((resolve, reject) => {
      // A raw TLS socket read through `onread` into one shared buffer: no HTTP parser, stream layers or
      // buffer per event on the measuring side, which shares the machine's two cores with the server.
      let started = false;
      const callback = (n: number, buf: Buffer): boolean => {
        const chunk = buf.subarray(0, n);
        if (!started) {
          started = true;
          if (!chunk.subarray(0, 12).toString('latin1').startsWith('HTTP/1.1 200')) reject(new Error(`watch answered ${chunk.subarray(0, 40).toString()}`));
          else resolve();
        }
        this.onData(chunk);
        return true;
      };
      // `onread` is a documented tls.connect option (as net's) that @types/node leaves out.
      const options: tls.ConnectionOptions & { onread: { buffer: Buffer; callback: typeof callback } } = {
        port: Number(url.port),
        host: url.hostname,
        ...creds,
        ALPNProtocols: ['http/1.1'],
        onread: { buffer: READ_BUFFER, callback },
      };
      const sock = tls.connect(options);
      sock.setNoDelay(true);
      sock.on('secureConnect', () => sock.write(`GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: bench\r\nAccept: application/json\r\n\r\n`));
      sock.on('error', reject);
      this.sockets.push(sock);
    });
  }

  private onData(chunk: Buffer): void {
    const now = performance.now();
    let at = chunk.indexOf(MARK);
    while (at >= 0) {
      let seq = 0;
      for (let j = at + MARK.length; j < chunk.length && chunk[j] >= 48 && chunk[j] <= 57; j++) seq = seq * 10 + chunk[j] - 48;
      let list = this.arrivals.get(seq);
      if (!list) this.arrivals.set(seq, (list = []));
      list.push(now);
      if (this.waiting?.seq === seq && list.length >= this.expected) this.waiting.resolve();
      at = chunk.indexOf(MARK, at + MARK.length);
    }
  }

  /** Resolves when every watcher got event `seq` (or after `ms`). */
  waitFor(seq: number, ms: number): Promise<void> {
    if ((this.arrivals.get(seq)?.length ?? 0) >= this.expected) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      this.waiting = {
        seq,
        resolve: () => {
          clearTimeout(t);
          this.waiting = undefined;
          resolve();
        },
      };
    });
  }

  arrivalsOf(seq: number): number[] {
    return this.arrivals.get(seq) ?? [];
  }

  totalArrivals(): number {
    let n = 0;
    for (const l of this.arrivals.values()) n += l.length;
    return n;
  }

  close(): void {
    for (const s of this.sockets) s.destroy();
    for (const s of this.sessions) s.destroy();
    this.sockets.length = 0;
    this.sessions.length = 0;
    this.arrivals.clear();
  }
}
