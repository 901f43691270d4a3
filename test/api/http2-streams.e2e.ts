import assert from 'node:assert/strict';
import http2 from 'node:http2';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { adminIdentity, type ClientIdentity } from '../support/credentials.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { eventually } from '../support/eventually.js';

const FRAME_HEADERS = 0x1;
const FRAME_SETTINGS = 0x4;
const FRAME_GOAWAY = 0x7;
const SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;

function frame(type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream, 5);
  return Buffer.concat([head, payload]);
}

/** HPACK "literal header field without indexing, new name", no Huffman coding (names and values under 127 bytes). */
function hpack(headers: [string, string][]): Buffer {
  return Buffer.concat(
    headers.flatMap(([k, v]) => {
      assert.ok(k.length < 127 && v.length < 127);
      return [Buffer.from([0x00, k.length]), Buffer.from(k), Buffer.from([v.length]), Buffer.from(v)];
    }),
  );
}

/** What a raw HTTP/2 client saw: the server's SETTINGS, the streams answered with HEADERS, a GOAWAY's code, whether the connection ended. */
interface RawH2 {
  settings: Map<number, number>;
  answered: Set<number>;
  goaway?: number;
  closed: boolean;
  socket: tls.TLSSocket;
}

/**
 * Opens `count` GET streams at once over one TLS connection, speaking
 * HTTP/2 frames directly: unlike Node's client (which holds back streams
 * past the server's limit), it sends them all, as a hostile client would.
 * Resolves once `settle` says it has seen enough or the connection ends.
 */
function rawStreams(url: string, id: ClientIdentity, path: string, count: number, settle: (s: RawH2) => boolean): Promise<RawH2> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: hostname, port: Number(port), ca: id.caPem, cert: id.certPem, key: id.keyPem, ALPNProtocols: ['h2'], servername: 'localhost' });
    const seen: RawH2 = { settings: new Map(), answered: new Set(), closed: false, socket };
    let buf = Buffer.alloc(0);
    let sent = false;
    const timer = setTimeout(() => reject(new Error(`timed out: ${seen.answered.size} answered, connection open`)), 20_000);
    socket.on('error', reject);
    socket.on('close', () => {
      seen.closed = true;
      clearTimeout(timer);
      resolve(seen);
    });
    socket.on('secureConnect', () => socket.write(Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), frame(FRAME_SETTINGS, 0, 0)])));
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 9) {
        const len = buf.readUIntBE(0, 3);
        if (buf.length < 9 + len) break;
        const [type, flags, stream] = [buf[3], buf[4], buf.readUInt32BE(5) & 0x7fffffff];
        const payload = buf.subarray(9, 9 + len);
        buf = buf.subarray(9 + len);
        if (type === FRAME_SETTINGS && !(flags & 0x1)) {
          for (let i = 0; i + 6 <= payload.length; i += 6) seen.settings.set(payload.readUInt16BE(i), payload.readUInt32BE(i + 2));
          socket.write(frame(FRAME_SETTINGS, 0x1, 0));
          if (!sent) {
            sent = true;
            const block = hpack([
              [':method', 'GET'],
              [':scheme', 'https'],
              [':authority', `${hostname}:${port}`],
              [':path', path],
            ]);
            socket.write(Buffer.concat(Array.from({ length: count }, (_, i) => frame(FRAME_HEADERS, 0x4 | 0x1, 2 * i + 1, block))));
          }
        } else if (type === FRAME_HEADERS) seen.answered.add(stream);
        else if (type === FRAME_GOAWAY) seen.goaway = payload.readUInt32BE(4);
      }
      if (settle(seen)) {
        clearTimeout(timer);
        resolve(seen);
      }
    });
  });
}

// kube-apiserver caps concurrent HTTP/2 streams per connection (--http2-max-streams-per-connection, default 100);
// Node's HTTP/2 server advertises no limit unless told.
describe('HTTP/2 streams per connection', () => {
  let s: TestServer;
  const WATCH = '/api/v1/namespaces/default/configmaps?watch=1&fieldSelector=metadata.name%3Dnone';

  before(async () => {
    s = await startTestServer('h2streams', { PLINTH_MAX_WATCHES_PER_USER: '0' });
  });
  after(async () => {
    await s?.close();
  });

  it('advertises upstream\'s default of 100 concurrent streams, which Node\'s client then respects', async () => {
    const id = adminIdentity();
    const session = http2.connect(s.url, { ca: id.caPem, cert: id.certPem, key: id.keyPem });
    try {
      await new Promise((r) => session.once('remoteSettings', r));
      assert.equal(session.remoteSettings.maxConcurrentStreams, 100);
    } finally {
      session.close();
    }
  });

  it('never serves a stream past the limit: a client that ignores it loses the connection, and the server serves others on', async () => {
    const seen = await rawStreams(s.url, adminIdentity(), WATCH, 101, () => false);
    assert.equal(seen.settings.get(SETTINGS_MAX_CONCURRENT_STREAMS), 100);
    assert.ok(seen.closed, 'the connection was ended');
    assert.ok(!seen.answered.has(201), 'the 101st stream was never answered');
    assert.ok(seen.answered.size <= 100);
    // The watches the connection carried are all ended on the server.
    await eventually(async () => assert.equal(/^plinth_watchers (\S+)/m.exec((await request(s.url).get('/metrics').expect(200)).text)?.[1], '0'), {
      timeoutMs: 5000,
      message: 'no watcher left on the server',
    });
    // Other clients are served as ever.
    const id = adminIdentity();
    const session = http2.connect(s.url, { ca: id.caPem, cert: id.certPem, key: id.keyPem });
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const st = session.request({ ':path': '/api/v1/namespaces/default/configmaps' });
        let code = 0;
        st.on('response', (h) => (code = Number(h[':status'])));
        st.resume();
        st.on('end', () => resolve(code));
        st.on('error', reject);
        st.end();
      });
      assert.equal(status, 200);
    } finally {
      session.close();
    }
  });
});
