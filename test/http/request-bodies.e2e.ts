import assert from 'node:assert/strict';
import https from 'node:https';
import http2 from 'node:http2';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { adminIdentity } from '../support/credentials.js';
import { kubectl, writeTestKubeconfig } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const configMap = (name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' } });

interface Answer {
  status: number;
  body: string;
}

/** One HTTP/2 request whose body (if any) is sent in `chunks`, with only the headers given: no Content-Type, no Content-Length. */
function h2Request(url: string, method: string, reqPath: string, chunks: string[] | undefined): Promise<Answer> {
  const id = adminIdentity();
  const session = http2.connect(url, { ca: id.caPem, cert: id.certPem, key: id.keyPem });
  return new Promise<Answer>((resolve, reject) => {
    session.on('error', reject);
    const stream = session.request({ ':method': method, ':path': reqPath }, { endStream: chunks === undefined });
    let status = 0;
    let body = '';
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.setEncoding('utf8');
    stream.on('data', (d: string) => (body += d));
    stream.on('end', () => resolve({ status, body }));
    stream.on('error', reject);
    if (chunks) {
      // Two DATA frames, the second a tick later: a body of unknown length, as Go streams a file.
      stream.write(chunks[0]);
      setImmediate(() => stream.end(chunks.slice(1).join('')));
    }
  }).finally(() => session.close());
}

/** One HTTP/1.1 request (Node's https client offers no ALPN) with a chunked body and no Content-Type. */
function h1Chunked(url: string, reqPath: string, text: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request(new URL(reqPath, url), { method: 'POST' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.write(text.slice(0, 10));
    req.end(text.slice(10));
  });
}

// kube-apiserver reads a body of any framing and takes a missing Content-Type as JSON, its first supported media type.
describe('request bodies without Content-Type or Content-Length', () => {
  let s: TestServer;
  const CMS = '/api/v1/namespaces/default/configmaps';

  before(async () => {
    s = await startTestServer('request-bodies');
  });
  after(async () => s?.close());

  it('kubectl create --raw -f (HTTP/2, no Content-Type, no Content-Length) creates the object', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'plinth-raw-'));
    const file = path.join(dir, 'cm.json');
    writeFileSync(file, configMap('raw-created'));
    const r = await kubectl(writeTestKubeconfig(s.url), ['create', '--raw', CMS, '-f', file]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).metadata.name, 'raw-created');
    const got = await kubectl(writeTestKubeconfig(s.url), ['get', 'configmap', 'raw-created', '-o', 'jsonpath={.data.k}']);
    assert.equal(got.stdout, 'v');
  });

  it('an HTTP/2 body in several DATA frames without length or type is read as JSON', async () => {
    const text = configMap('h2-streamed');
    const a = await h2Request(s.url, 'POST', CMS, [text.slice(0, 15), text.slice(15)]);
    assert.equal(a.status, 201, a.body);
    assert.equal(JSON.parse(a.body).metadata.name, 'h2-streamed');
  });

  it('an HTTP/1.1 chunked body without Content-Type is read as JSON', async () => {
    const a = await h1Chunked(s.url, CMS, configMap('h1-chunked'));
    assert.equal(a.status, 201, a.body);
    assert.equal(JSON.parse(a.body).metadata.name, 'h1-chunked');
  });

  it('an HTTP/2 POST whose stream ends with its headers is refused as an empty body', async () => {
    const a = await h2Request(s.url, 'POST', CMS, undefined);
    assert.equal(a.status, 400);
    assert.equal(JSON.parse(a.body).message, 'the request body is empty; expected an object');
  });

  it('an HTTP/2 PATCH streamed without Content-Type is still refused as an unsupported patch type', async () => {
    const a = await h2Request(s.url, 'PATCH', `${CMS}/raw-created`, ['{"data":', '{"k":"w"}}']);
    assert.equal(a.status, 415, a.body);
  });
});
