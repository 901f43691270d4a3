import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { CertificateAuthority } from '../../apps/api/src/pki/certificate-authority.js';
import { renderKubeconfig } from '../../apps/api/src/pki/kubeconfig.writer.js';
import { adminIdentity, anonymousIdentity, type ClientIdentity, requestAs, sharedTestDataDir, testPki } from '../support/credentials.js';
import { kubectl } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { ROOT_CA_CONFIGMAP } from '../support/root-ca.js';
import { eventually } from '../support/eventually.js';

/** One HTTP/2 session to `url` as `id`. */
function h2(url: string, id: ClientIdentity): http2.ClientHttp2Session {
  return http2.connect(url, { ca: id.caPem, cert: id.certPem, key: id.keyPem });
}

/** A GET on `session`; resolves with status and body once the stream ends. */
function h2get(session: http2.ClientHttp2Session, p: string): Promise<{ status: number; body: string; headers: http2.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const st = session.request({ ':path': p, accept: 'application/json' });
    let body = '';
    let headers: http2.IncomingHttpHeaders = {};
    st.setEncoding('utf8');
    st.on('response', (h) => (headers = h));
    st.on('data', (d: string) => (body += d));
    st.on('end', () => resolve({ status: Number(headers[':status']), body, headers }));
    st.on('error', reject);
    st.end();
  });
}

/** Opens a watch stream on `session`, collecting decoded events. */
function h2watch(session: http2.ClientHttp2Session, p: string): { events: { type: string; object: { metadata: { name: string } } }[]; stream: http2.ClientHttp2Stream } {
  const events: { type: string; object: { metadata: { name: string } } }[] = [];
  const stream = session.request({ ':path': p });
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (d: string) => {
    buf += d;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      events.push(JSON.parse(buf.slice(0, nl)));
      buf = buf.slice(nl + 1);
    }
  });
  return { events, stream };
}

describe('secure serving: TLS, HTTP/2, generated and operator certificates, the health listener', { timeout: 120_000 }, () => {
  let s: TestServer;

  before(async () => {
    s = await startTestServer('authn_tls', { PLINTH_HEALTH_PORT: '0' });
  });
  after(async () => s.close());

  it('negotiates HTTP/2 by ALPN and falls back to HTTP/1.1; refuses TLS below 1.2', async () => {
    const { port } = new URL(s.url);
    const id = adminIdentity();
    const alpn = (protocols: string[]) =>
      new Promise<string | false>((resolve, reject) => {
        const sock = tls.connect({ port: Number(port), host: '127.0.0.1', ca: id.caPem, ALPNProtocols: protocols }, () => {
          resolve(sock.alpnProtocol ?? false);
          sock.end();
        });
        sock.on('error', reject);
      });
    assert.equal(await alpn(['h2', 'http/1.1']), 'h2');
    assert.equal(await alpn(['http/1.1']), 'http/1.1');
    await assert.rejects(
      new Promise((resolve, reject) => {
        const sock = tls.connect({ port: Number(port), host: '127.0.0.1', ca: id.caPem, maxVersion: 'TLSv1.1', minVersion: 'TLSv1' }, () => resolve(sock));
        sock.on('error', reject);
      }),
    );
    const res = await request(s.url).get('/version').expect(200);
    assert.equal(res.body.major, '1');
  });

  it('serves a certificate for localhost, 127.0.0.1 and ::1 signed by the generated CA, kept in the data folder', async () => {
    const id = adminIdentity();
    const cert = await new Promise<tls.PeerCertificate>((resolve, reject) => {
      const sock = tls.connect({ port: Number(new URL(s.url).port), host: '127.0.0.1', servername: 'localhost', ca: id.caPem }, () => {
        resolve(sock.getPeerCertificate());
        sock.end();
      });
      sock.on('error', reject);
    });
    assert.match(cert.subjectaltname ?? '', /DNS:localhost/);
    assert.match(cert.subjectaltname ?? '', /IP Address:127\.0\.0\.1/);
    assert.match(cert.subjectaltname ?? '', /IP Address:0:0:0:0:0:0:0:1/);
    const ca = readFileSync(path.join(sharedTestDataDir(), 'pki', 'ca.crt'), 'utf8');
    assert.equal(ca, testPki().caPem);
    // A second server on the same data folder reuses the CA and the serving certificate.
    const again = await startTestServer('authn_tls_again');
    try {
      assert.equal(again.pki.caPem, s.pki.caPem);
      assert.equal(again.pki.serving.certPem, s.pki.serving.certPem);
      assert.equal(again.pki.serviceAccountKeyPem, s.pki.serviceAccountKeyPem);
    } finally {
      await again.close();
    }
  });

  it('multiplexes watches and requests on one HTTP/2 connection, errors included', async () => {
    await request(s.url).post('/api/v1/namespaces').send({ metadata: { name: 'h2' } }).expect(201);
    const session = h2(s.url, adminIdentity());
    try {
      const a = h2watch(session, '/api/v1/namespaces/h2/configmaps?watch=true');
      const b = h2watch(session, '/api/v1/namespaces/h2/configmaps?watch=true&labelSelector=app%3Dweb');
      await new Promise((r) => setTimeout(r, 200));
      const created = await h2get(session, '/api/v1/namespaces/h2/configmaps');
      assert.equal(created.status, 200);
      await request(s.url).post('/api/v1/namespaces/h2/configmaps').send({ metadata: { name: 'one', labels: { app: 'web' } } }).expect(201);
      await request(s.url).post('/api/v1/namespaces/h2/configmaps').send({ metadata: { name: 'two' } }).expect(201);
      await eventually(() => a.events.length >= 3 && b.events.length >= 1, { intervalMs: 20, message: 'watch events over HTTP/2' });
      // Without a resourceVersion the watch starts with what is there: the namespace's kube-root-ca.crt.
      assert.deepEqual(a.events.map((e) => `${e.type} ${e.object.metadata.name}`), [`ADDED ${ROOT_CA_CONFIGMAP}`, 'ADDED one', 'ADDED two']);
      assert.deepEqual(b.events.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED one']);
      const missing = await h2get(session, '/api/v1/namespaces/h2/configmaps/nope');
      assert.equal(missing.status, 404);
      assert.equal(JSON.parse(missing.body).reason, 'NotFound');
      a.stream.close();
      b.stream.close();
    } finally {
      session.close();
    }
    const anon = h2(s.url, anonymousIdentity());
    try {
      const denied = await h2get(anon, '/api');
      assert.equal(denied.status, 403);
      assert.equal(JSON.parse(denied.body).message, 'forbidden: User "system:anonymous" cannot get path "/api"');
    } finally {
      anon.close();
    }
  });

  it('serves /healthz, /livez, /readyz and /metrics on the loopback plain-HTTP listener, and nothing else', async () => {
    assert.ok(s.healthUrl);
    assert.match(s.healthUrl!, /^http:\/\/127\.0\.0\.1:\d+$/);
    for (const p of ['/healthz', '/livez', '/readyz']) {
      const r = await fetch(`${s.healthUrl}${p}`);
      assert.equal(r.status, 200);
      assert.equal(await r.text(), 'ok');
    }
    const m = await fetch(`${s.healthUrl}/metrics`);
    assert.match(await m.text(), /plinth_http_requests_total/);
    assert.equal((await fetch(`${s.healthUrl}/api/v1/namespaces`)).status, 404);
    assert.equal((await fetch(`${s.healthUrl}/version`)).status, 404);
    assert.equal((await fetch(`${s.healthUrl}/healthz`, { method: 'POST' })).status, 405);
  });

  it('writes a kubeconfig kubectl uses as is: CA data and the administrator certificate, a context per tenant', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'plinth-kc-'));
    const file = path.join(dir, 'kubeconfig');
    const p = testPki();
    writeFileSync(file, renderKubeconfig(s.url, ['acme'], { caPem: p.caPem, clientCertPem: p.admin.certPem, clientKeyPem: p.admin.keyPem }));
    const who = await kubectl(file, ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
    assert.equal(who.code, 0, who.stderr);
    assert.equal(who.stdout, 'plinth-admin');
    const ctx = await kubectl(file, ['config', 'get-contexts', '-o', 'name']);
    assert.deepEqual(ctx.stdout.trim().split('\n').sort(), ['plinth-acme', 'plinth-default']);
  });
});

describe('secure serving with the operator\'s certificate, key and client CA', { timeout: 120_000 }, () => {
  let s: TestServer;
  let serverCa: CertificateAuthority;
  let nextServerCa: CertificateAuthority;
  let clientCa: CertificateAuthority;

  before(async () => {
    serverCa = await CertificateAuthority.generate('operator-server-ca');
    nextServerCa = await CertificateAuthority.generate('operator-server-ca-next');
    clientCa = await CertificateAuthority.generate('operator-client-ca');
    const serving = await serverCa.issue({ commonName: 'plinth.example', dnsNames: ['plinth.example', 'localhost'], ipAddresses: ['127.0.0.1'], usage: 'server', validDays: 1 });
    const dir = mkdtempSync(path.join(tmpdir(), 'plinth-operator-tls-'));
    const f = (n: string, text: string) => {
      writeFileSync(path.join(dir, n), text);
      return path.join(dir, n);
    };
    s = await startTestServer('authn_operator_tls', {
      PLINTH_TLS_CERT_FILE: f('tls.crt', serving.certPem + serverCa.certPem),
      PLINTH_TLS_KEY_FILE: f('tls.key', serving.keyPem),
      PLINTH_CLIENT_CA_FILE: f('client-ca.crt', clientCa.certPem),
      PLINTH_ROOT_CA_FILE: f('root-ca.crt', `${serverCa.certPem}${nextServerCa.certPem}`),
    });
  });
  after(async () => s.close());

  it('serves the operator\'s certificate and authenticates client certificates of the operator\'s client CA only', async () => {
    const ops = await clientCa.issue({ commonName: 'ops', organizations: ['system:masters'], usage: 'client', validDays: 1 });
    const asOps = requestAs(s.url, { caPem: serverCa.certPem, certPem: ops.certPem, keyPem: ops.keyPem });
    const who = await asOps.post('/apis/authentication.k8s.io/v1/selfsubjectreviews').send({}).expect(201);
    assert.equal(who.body.status.userInfo.username, 'ops');
    // The generated CA no longer signs trusted client certificates.
    const generated = adminIdentity();
    await requestAs(s.url, { caPem: serverCa.certPem, certPem: generated.certPem, keyPem: generated.keyPem }).get('/api/v1/namespaces').expect(401);
    // Clients that trust only the generated CA cannot verify the operator's certificate.
    await assert.rejects(
      new Promise((resolve, reject) => {
        const req = https.get(`${s.url}/version`, { ca: generated.caPem, agent: false }, resolve);
        req.on('error', reject);
      }),
      /self-signed certificate in certificate chain|unable to verify/,
    );
  });
  it("publishes the operator's root CA file, not the serving chain, as kube-root-ca.crt in every namespace", async () => {
    const ops = await clientCa.issue({ commonName: 'ops', organizations: ['system:masters'], usage: 'client', validDays: 1 });
    const asOps = requestAs(s.url, { caPem: serverCa.certPem, certPem: ops.certPem, keyPem: ops.keyPem });
    await asOps.post('/api/v1/namespaces').send({ metadata: { name: 'root-ca-file' } }).expect(201);
    for (const ns of ['default', 'kube-system', 'root-ca-file']) {
      const cm = await asOps.get(`/api/v1/namespaces/${ns}/configmaps/${ROOT_CA_CONFIGMAP}`).expect(200);
      assert.equal(cm.body.data['ca.crt'], `${serverCa.certPem.trim()}\n${nextServerCa.certPem.trim()}\n`, ns);
    }
  });
});
