import assert from 'node:assert/strict';
import http2 from 'node:http2';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { adminIdentity } from '../support/credentials.js';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const CMS = '/api/v1/namespaces/default/configmaps';
const TIMEOUT = 'Timeout: request did not complete within the allotted timeout';

/** A TLS connection speaking HTTP/1.1, as the administrator. */
function connectH1(url: string): Promise<tls.TLSSocket> {
  const { port } = new URL(url);
  const id = adminIdentity();
  return new Promise((resolve, reject) => {
    const sock = tls.connect({ host: '127.0.0.1', port: Number(port), servername: 'localhost', ca: id.caPem, cert: id.certPem, key: id.keyPem, ALPNProtocols: ['http/1.1'] }, () => resolve(sock));
    sock.once('error', reject);
  });
}

/** What an HTTP/1.1 peer read before the server closed: the bytes, and whether the close was a reset. */
interface Read {
  text: string;
  reset: boolean;
}

/** How long a dripping client waits for the server to close before the test fails saying what it read (not a timing assertion: every server deadline here is 1 s). */
const CLOSE_WAIT_MS = 30_000;

/**
 * Sends `head` and then one byte every 20 ms for as long as the server
 * reads (a client that never finishes its request); resolves with what it
 * read once the server has closed the connection. Rejects with what it read
 * if the server has not closed it within CLOSE_WAIT_MS (once seen in CI as a
 * silent file timeout; this names the state instead).
 */
function dripUntilClosed(sock: tls.TLSSocket, head: string, drip: string): Promise<Read> {
  return new Promise((resolve, reject) => {
    let text = '';
    let reset = false;
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => (text += d));
    sock.on('error', (err: NodeJS.ErrnoException) => (reset ||= err.code === 'ECONNRESET' || err.code === 'EPIPE'));
    const timer = setInterval(() => {
      if (sock.writable) sock.write(drip);
    }, 20);
    const stuck = setTimeout(() => {
      clearInterval(timer);
      sock.destroy();
      reject(new Error(`the server did not close the connection within ${CLOSE_WAIT_MS} ms (writable ${sock.writable}, read ${text.length} bytes: ${JSON.stringify(text.slice(0, 300))})`));
    }, CLOSE_WAIT_MS);
    sock.once('close', () => {
      clearInterval(timer);
      clearTimeout(stuck);
      resolve({ text, reset });
    });
    sock.write(head);
  });
}

function statusOf(text: string): { code: number; body: Record<string, unknown> } {
  const code = Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1]);
  return { code, body: JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) };
}

/**
 * An HTTP/2 POST whose body never finishes (one byte every 20 ms). Resolves
 * with the answer once its end has arrived (END_STREAM) and the client has
 * stopped sending: Node's client stream emits 'close' only once its own
 * writable side is finished, which a sender that never finishes its body
 * never does, so waiting for 'close' waited for the session's idle timeout
 * (72 s) about one run in four, whatever the server did.
 */
function h2Drip(session: http2.ClientHttp2Session, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/json', 'content-length': '100000' });
    let status = 0;
    let body = '';
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.setEncoding('utf8');
    stream.on('data', (d: string) => (body += d));
    stream.on('error', () => undefined);
    stream.write('{"metadata":');
    const timer = setInterval(() => {
      if (!stream.closed && stream.writable) stream.write(' ');
    }, 20);
    const done = () => {
      clearInterval(timer);
      if (status === 0) reject(new Error(`stream ended without an answer (code ${stream.rstCode})`));
      else resolve({ status, body });
      if (!stream.closed) stream.close(http2.constants.NGHTTP2_CANCEL);
    };
    stream.once('end', done);
    stream.once('close', done);
  });
}

// kube-apiserver's --request-timeout (60 s by default): a request other than a watch not answered in time gets 504 Timeout.
describe('request timeout (PLINTH_REQUEST_TIMEOUT_SECONDS=1)', () => {
  let s: TestServer;

  before(async () => {
    s = await startTestServer('request-timeout', { PLINTH_REQUEST_TIMEOUT_SECONDS: '1' });
  });
  after(async () => s?.close());

  it('HTTP/1.1: a body sent one byte at a time gets 504 Timeout and the connection is closed', async () => {
    const sock = await connectH1(s.url);
    const head = `POST ${CMS} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"metadata":`;
    const read = await dripUntilClosed(sock, head, ' ');
    const { code, body } = statusOf(read.text);
    assert.equal(code, 504, read.text);
    assert.match(read.text, /\r\nconnection: close\r\n/i);
    assert.equal(body.reason, 'Timeout');
    assert.equal(body.message, TIMEOUT);
    assert.equal(body.code, 504);
  });

  it('HTTP/2: a body sent one byte at a time gets 504 Timeout, its stream ends and the connection serves on', async () => {
    const id = adminIdentity();
    const session = http2.connect(s.url, { ca: id.caPem, cert: id.certPem, key: id.keyPem });
    try {
      const answer = await h2Drip(session, CMS);
      assert.equal(answer.status, 504, answer.body);
      const body = JSON.parse(answer.body);
      assert.equal(body.reason, 'Timeout');
      assert.equal(body.message, TIMEOUT);
      const next = await new Promise<number>((resolve, reject) => {
        const st = session.request({ ':path': CMS });
        st.on('response', (h) => resolve(Number(h[':status'])));
        st.on('error', reject);
        st.resume();
      });
      assert.equal(next, 200);
    } finally {
      session.close();
    }
  });

  it('a watch is long-running: it outlives the request timeout and still delivers events', async () => {
    const id = adminIdentity();
    const session = http2.connect(s.url, { ca: id.caPem, cert: id.certPem, key: id.keyPem });
    try {
      const stream = session.request({ ':path': `${CMS}?watch=1&fieldSelector=metadata.name%3Dlate` });
      let text = '';
      stream.setEncoding('utf8');
      stream.on('data', (d: string) => (text += d));
      await new Promise((r) => stream.once('response', r));
      // Past the deadline a non-watch request would have had.
      await new Promise((r) => setTimeout(r, 1500));
      await request(s.url).post(CMS).send({ metadata: { name: 'late' } }).expect(201);
      while (!text.includes('\n')) await new Promise((r) => stream.once('data', r));
      const event = JSON.parse(text.split('\n')[0]);
      assert.equal(event.type, 'ADDED');
      assert.equal(event.object.metadata.name, 'late');
      stream.close();
    } finally {
      session.close();
    }
  });

  it('HTTP/1.1: over-long headers always reach the client as 431, even while it is still sending them', async () => {
    for (let i = 0; i < 10; i++) {
      const sock = await connectH1(s.url);
      const head = `GET ${CMS} HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'x'.repeat(64 * 1024)}`;
      const read = await dripUntilClosed(sock, head, 'x'.repeat(4096));
      assert.ok(read.text.length > 0, `try ${i}: nothing was read (reset: ${read.reset})`);
      const { code, body } = statusOf(read.text);
      assert.equal(code, 431, read.text);
      assert.equal(body.reason, 'RequestHeaderFieldsTooLarge');
    }
  });
});

describe('request timeout asked by the client (?timeout=)', () => {
  let s: TestServer;

  before(async () => {
    s = await startTestServer('request-timeout-query');
  });
  after(async () => s?.close());

  it('a shorter ?timeout= ends a slow request with 504 before the server\'s default', async () => {
    const sock = await connectH1(s.url);
    const head = `POST ${CMS}?timeout=1s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"metadata":`;
    const read = await dripUntilClosed(sock, head, ' ');
    const { code, body } = statusOf(read.text);
    assert.equal(code, 504, read.text);
    assert.equal(body.message, TIMEOUT);
  });

  it('an unparsable ?timeout= is 400 with upstream\'s message (kubectl get --raw)', async () => {
    const r = await kubectl(writeTestKubeconfig(s.url), ['get', '--raw', `${CMS}?timeout=abc`]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /invalid timeout specified in the request URL - time: invalid duration \\?"abc\\?"/);
    const res = await request(s.url).get(`${CMS}?timeout=10`).expect(400);
    assert.equal(res.body.message, 'invalid timeout specified in the request URL - time: missing unit in duration "10"');
  });
});
