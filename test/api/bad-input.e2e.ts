import assert from 'node:assert/strict';
import http from 'node:http';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { adminIdentity } from '../support/credentials.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

interface RawAnswer {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

/**
 * Sends `path` exactly as given (no client-side encoding checks), over a raw TLS socket (HTTP/1.1, as the administrator).
 * A server that refuses a request before reading all of it closes the socket with bytes unread, which resets the
 * connection; on a loaded host the reset can arrive before the answer is read. An answer that was read counts; a
 * reset before any answer is a transport artefact and the request is sent again (at most three times).
 */
async function raw(base: string, method: string, path: string, headers: Record<string, string> = {}, body = ''): Promise<RawAnswer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await rawOnce(base, method, path, headers, body);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (attempt >= 3 || (code !== 'ECONNRESET' && code !== 'EPIPE')) throw err;
    }
  }
}

function rawOnce(base: string, method: string, path: string, headers: Record<string, string>, body: string): Promise<RawAnswer> {
  const u = new URL(base);
  const id = adminIdentity();
  return new Promise((resolve, reject) => {
    const sock = tls.connect({ port: Number(u.port), host: u.hostname, ca: id.caPem, cert: id.certPem, key: id.keyPem, ALPNProtocols: ['http/1.1'] }, () => {
      const head = [`${method} ${path} HTTP/1.1`, `Host: ${u.host}`, 'Connection: close', `Content-Length: ${Buffer.byteLength(body)}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
      // Written, not ended: a client that half-closes its side aborts its request at the server (Node's and Go's
      // servers both read the FIN as the client going away), and the request asks `Connection: close` anyway.
      sock.write(`${head.join('\r\n')}\r\n\r\n${body}`);
    });
    let text = '';
    let settled = false;
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => (text += d));
    const finish = (): void => {
      if (settled) return;
      settled = true;
      const [head, ...rest] = text.split('\r\n\r\n');
      const lines = head.split('\r\n');
      const status = Number(lines[0].split(' ')[1]);
      const hdrs: http.IncomingHttpHeaders = {};
      for (const l of lines.slice(1)) hdrs[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
      let payload = rest.join('\r\n\r\n');
      if (/chunked/i.test(String(hdrs['transfer-encoding']))) payload = dechunk(payload);
      resolve({ status, body: Number.isNaN(status) ? `no HTTP answer (${text.length} bytes: ${JSON.stringify(text.slice(0, 200))})` : payload, headers: hdrs });
    };
    sock.on('error', (err) => {
      // The whole answer arrived before the reset: it counts.
      if (/^HTTP\/1\.1 \d{3} /.test(text) && text.includes('\r\n\r\n') && answerComplete(text)) finish();
      else if (!settled) {
        settled = true;
        reject(err);
      }
    });
    sock.on('end', finish);
  });
}

/** Whether `text` holds a whole HTTP answer: its Content-Length worth of body, or the last chunk. */
function answerComplete(text: string): boolean {
  const at = text.indexOf('\r\n\r\n');
  const head = text.slice(0, at);
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (length) return Buffer.byteLength(text.slice(at + 4)) >= Number(length[1]);
  return /\r\n0\r\n\r\n$/.test(text);
}

function dechunk(s: string): string {
  let out = '';
  let i = 0;
  for (;;) {
    const nl = s.indexOf('\r\n', i);
    if (nl < 0) return out;
    const size = parseInt(s.slice(i, nl), 16);
    if (!size) return out;
    out += s.slice(nl + 2, nl + 2 + size);
    i = nl + 2 + size + 2;
  }
}

function assertStatus(res: RawAnswer | request.Response, code: number | [number, number], what: string): Record<string, unknown> {
  const status = res.status;
  const text = 'text' in res ? res.text : res.body;
  if (Array.isArray(code)) assert.ok(status >= code[0] && status <= code[1], `${what}: ${status} ${text}`);
  else assert.equal(status, code, `${what}: ${text}`);
  const body = JSON.parse(text) as Record<string, unknown>;
  assert.equal(body.kind, 'Status', `${what}: ${text}`);
  assert.equal(body.code, status, what);
  assert.doesNotMatch(String(body.message), /invalid byte sequence|unsupported Unicode|Maximum call stack|out of range for type|FST_/, what);
  return body;
}

/** JSON text of `{"a":{"a":…leaf…}}`, `depth` levels deep (built as text: JSON.stringify would overflow the stack). */
function nested(depth: number, leaf: string): string {
  return `${'{"a":'.repeat(depth)}${leaf}${'}'.repeat(depth)}`;
}

// Hostile and malformed input: every answer is a 4xx Status (or acceptance where Go's decoder accepts it), never a 500.
describe('bad input never gets a 500', () => {
  let s: TestServer;
  let api: ReturnType<typeof request>;
  const CM = '/api/v1/namespaces/demo/configmaps';

  before(async () => {
    s = await startTestServer('bad-input');
    api = request(s.url);
    await api.post('/api/v1/namespaces').send({ metadata: { name: 'demo' } }).expect(201);
    await api.post(CM).send({ metadata: { name: 'cm' }, data: { a: '1' } }).expect(201);
  });
  after(async () => s?.close());

  it('answers 400 for a NUL anywhere in the path or the query', async () => {
    for (const path of [`${CM}/a%00b`, '/api/v1/namespaces/de%00mo/configmaps', `${CM}?fieldSelector=metadata.name%3Da%00b`, `${CM}?labelSelector=a%3Db%00`, '/api/v1/namespaces/demo%00']) {
      const body = assertStatus(await raw(s.url, 'GET', path), 400, path);
      assert.equal(body.reason, 'BadRequest');
    }
    const body = assertStatus(await raw(s.url, 'DELETE', `${CM}/x%00`), 400, 'delete');
    assert.equal(body.reason, 'BadRequest');
  });

  it('answers 400 for continue tokens with a NUL in their key or an out-of-range revision', async () => {
    const token = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    for (const t of [token({ v: 'meta.k8s.io/v1', rv: 1e20, start: 'demo/a\u0000' }), token({ v: 'meta.k8s.io/v1', rv: 5, start: 'de\u0000mo/a\u0000' }), token({ v: 'meta.k8s.io/v1', rv: 2 ** 53, start: 'demo/a' })]) {
      const res = await api.get(`${CM}?limit=1&continue=${t}`);
      const body = assertStatus(res, 400, t);
      assert.match(String(body.message), /^continue key is not valid/);
    }
  });

  it('refuses a NUL in a JSON string or key with 400 (PostgreSQL jsonb cannot store it), and stores a lone surrogate as U+FFFD as Go does', async () => {
    for (const text of ['{"metadata":{"name":"nul1"},"data":{"a":"x\\u0000y"}}', '{"metadata":{"name":"nul2"},"data":{"k\\u0000":"v"}}', '{"metadata":{"name":"nul\\u0000"}}']) {
      const res = await api.post(CM).set('Content-Type', 'application/json').send(text);
      const body = assertStatus(res, [400, 422], text);
      assert.match(String(body.message), /NUL|\\u0000|Invalid value/);
    }
    const res = await api.post(CM).set('Content-Type', 'application/json').send('{"metadata":{"name":"sur"},"data":{"a":"x\\ud800y","b":"\\udfffz"}}').expect(201);
    assert.equal(res.body.data.a, 'x\ufffdy');
    const got = await api.get(`${CM}/sur`).expect(200);
    assert.deepEqual(got.body.data, { a: 'x\ufffdy', b: '\ufffdz' });
    // A lone surrogate in a key becomes U+FFFD too, which a configmap key may not hold: 422, not 500.
    assertStatus(await api.post(CM).set('Content-Type', 'application/json').send('{"metadata":{"name":"surkey"},"data":{"\\udfff":"z"}}'), 422, 'surrogate key');
  });

  it("answers 400 with upstream's decoder text for an apiVersion or kind that is not a string (found by the fuzzer), and reads a null one as absent", async () => {
    const cases: Array<[string, unknown, string]> = [['apiVersion', { toString: false }, 'object'], ['kind', 5, 'number'], ['apiVersion', ['v1'], 'array'], ['kind', true, 'bool']];
    for (const [field, value, goKind] of cases) {
      const decodeError = `couldn't get version/kind; json parse error: json: cannot unmarshal ${goKind} into Go struct field .${field} of type string`;
      const text = JSON.stringify({ [field]: value, metadata: { name: 'typemeta' } });
      const created = assertStatus(await api.post(CM).set('Content-Type', 'application/json').send(text), 400, text);
      assert.equal(created.message, `the object provided is unrecognized (must be of type ConfigMap): ${decodeError} (${text.slice(0, 30)}...)`);
      assertStatus(await api.put(`${CM}/cm`).set('Content-Type', 'application/json').send(JSON.stringify({ [field]: value, metadata: { name: 'cm' } })), 400, `put ${text}`);
      const patched = assertStatus(await api.patch(`${CM}/cm`).set('Content-Type', 'application/merge-patch+json').send(JSON.stringify({ [field]: value })), 400, `patch ${text}`);
      assert.match(String(patched.message), new RegExp(decodeError.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')));
    }
    assertStatus(await api.post(CM).set('Content-Type', 'application/yaml').send('apiVersion: {a: 1}\nmetadata: {name: typemeta}\n'), 400, 'yaml');
    await api.get(`${CM}/typemeta`).expect(404);
    const nulls = await api.post(CM).set('Content-Type', 'application/json').send('{"apiVersion":null,"kind":null,"metadata":{"name":"typemeta"}}').expect(201);
    assert.deepEqual([nulls.body.apiVersion, nulls.body.kind], ['v1', 'ConfigMap']);
  });

  it('answers 400 for field selectors on __proto__, constructor or toString (found by the fuzzer: a 500 before)', async () => {
    for (const field of ['__proto__', 'constructor', 'toString']) {
      const body = assertStatus(await api.get(`${CM}?fieldSelector=${field}%3D`), 400, field);
      assert.equal(body.message, `field label not supported: ${field}`);
    }
  });

  it('answers 4xx for merge and strategic merge patches nested 5,000 deep', async () => {
    for (const type of ['application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/json']) {
      const patch = type === 'application/json' ? `[{"op":"add","path":"/data/x","value":${nested(5000, '1')}}]` : `{"metadata":{"annotations":${nested(5000, '"x"')}}}`;
      const res = await api.patch(`${CM}/cm`).set('Content-Type', type).send(patch);
      assertStatus(res, [400, 422], type);
    }
    assertStatus(await api.post(CM).set('Content-Type', 'application/json').send(`{"metadata":{"name":"deep"},"data":${nested(5000, '"x"')}}`), [400, 422], 'create');
  });

  it('answers 400 for unknown $patch directives and a non-list $setElementOrder, with upstream texts', async () => {
    const smp = (p: unknown) => api.patch(`${CM}/cm`).set('Content-Type', 'application/strategic-merge-patch+json').send(JSON.stringify(p));
    const explode = assertStatus(await smp({ $patch: 'explode' }), 400, 'explode');
    assert.match(String(explode.message), /^unknown patch type: explode in map: /);
    assertStatus(await smp({ metadata: { '$setElementOrder/finalizers': 'x' } }), 400, 'setElementOrder');
    assertStatus(await smp({ metadata: { '$setElementOrder/finalizers': { a: 1 } } }), 400, 'setElementOrder map');
  });

  it("maps Fastify's own errors to Status: over-long headers (431), bad percent-encoding (400)", async () => {
    const big = assertStatus(await raw(s.url, 'GET', CM, { 'X-Big': 'x'.repeat(20_000) }), 431, 'header');
    assert.equal(big.reason, 'RequestHeaderFieldsTooLarge');
    const badLength = assertStatus(await raw(s.url, 'POST', CM, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }, 'zz\r\n{}\r\n0\r\n\r\n'), 400, 'bad chunk');
    assert.equal(badLength.reason, 'BadRequest');
    const huge = `{"metadata":{"name":"big"},"data":{"a":"${'x'.repeat(3 * 1024 * 1024)}"}}`;
    assertStatus(await raw(s.url, 'POST', CM, { 'Content-Type': 'application/json' }, huge), 413, 'too large');
    for (const path of [`${CM}/%zz`, '/api/v1/namespaces/%E0%A4%A', `${CM}?labelSelector=%zz`]) {
      const body = assertStatus(await raw(s.url, 'GET', path), 400, path);
      assert.equal(body.reason, 'BadRequest');
    }
  });

  it('keeps serving after all of it', async () => {
    await api.get(`${CM}/cm`).expect(200);
  });
});
