// Idle watches multiplexed as HTTP/2 streams, as real clients (client-go,
// kubectl) open them: many streams over one TLS connection, rather than a
// connection per watch.
import http2 from 'node:http2';

/** Watches open over HTTP/2 sessions; `close()` ends every stream and session. */
export interface H2Watches {
  sessions: number;
  streams: number;
  close(): void;
}

/**
 * Opens `count` watches of `path` on `base` as HTTP/2 streams, at most
 * `perSession` per connection; resolves once every stream got its response
 * headers (the watch is registered on the server).
 */
export async function openH2Watches(base: string, path: string, count: number, perSession: number, tls: { ca: string; cert: string; key: string }): Promise<H2Watches> {
  const sessions: http2.ClientHttp2Session[] = [];
  const streams: http2.ClientHttp2Stream[] = [];
  for (let opened = 0; opened < count; opened += perSession) {
    const session = http2.connect(base, { ...tls, peerMaxConcurrentStreams: perSession });
    session.on('error', () => undefined);
    sessions.push(session);
    const n = Math.min(perSession, count - opened);
    await Promise.all(
      Array.from({ length: n }, () => new Promise<void>((resolve, reject) => {
        const stream = session.request({ ':method': 'GET', ':path': path });
        streams.push(stream);
        stream.on('response', (headers) => (headers[':status'] === 200 ? resolve() : reject(new Error(`watch answered ${headers[':status']}`))));
        stream.on('data', () => undefined);
        stream.on('error', reject);
        stream.end();
      })),
    );
  }
  return {
    sessions: sessions.length,
    streams: streams.length,
    close: () => {
      for (const s of streams) s.close();
      for (const s of sessions) s.destroy();
    },
  };
}
