import { performance } from 'node:perf_hooks';
import { type TLSSocket, createServer } from 'node:tls';

// The fan-out ceiling of the watch benchmark (bench/watch.bench.ts), run as a child process: a bare Node TLS
// server that, told a sequence number over IPC, writes one watch event of the benchmark's size to every
// connection, as one pre-framed HTTP/1.1 chunk, the way the API server writes an event it already encoded.
// Measured with the same watcher pool as the API, it is what one Node thread can do on this machine
// with no API server work at all: no NOTIFY, no change-log read, no filtering.

interface Init {
  key: string;
  cert: string;
  ca: string;
  /** Bytes of one event line (padded to it). */
  eventBytes: number;
}

const init = JSON.parse(process.env.RAW_FANOUT_INIT ?? '{}') as Init;
const watchers = new Set<TLSSocket>();

const server = createServer({ key: init.key, cert: init.cert, ca: init.ca, requestCert: true, ALPNProtocols: ['http/1.1'] }, (sock) => {
  sock.setNoDelay(true);
  sock.once('data', () => {
    sock.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n');
    watchers.add(sock);
  });
  sock.on('close', () => watchers.delete(sock));
  sock.on('error', () => watchers.delete(sock));
});

/** One event line naming `w-<seq>`, padded to the benchmark's event size, framed as an HTTP chunk. */
function eventChunk(seq: number): Buffer {
  const head = `{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"w-${seq}","namespace":"lat","pad":"`;
  const tail = '"}}}\n';
  const line = head + 'x'.repeat(Math.max(0, init.eventBytes - head.length - tail.length)) + tail;
  return Buffer.from(`${Buffer.byteLength(line).toString(16)}\r\n${line}\r\n`);
}

process.on('message', (m: { seq: number }) => {
  const chunk = eventChunk(m.seq);
  const t0 = performance.now();
  for (const s of watchers) s.write(chunk);
  // The write loop's own time, as the API server's plinth_watch_dispatch_seconds times its dispatch.
  process.send?.({ loopMs: performance.now() - t0 });
});

server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  process.send?.({ port: typeof addr === 'object' && addr ? addr.port : 0 });
});

// Exit normally when the benchmark ends this child, so a --cpu-prof given to it is written.
process.on('SIGTERM', () => process.exit(0));
