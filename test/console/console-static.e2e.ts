import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { anonymousIdentity, requestAs, type RequestAs } from '../support/credentials.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe('the console at /console/ (static files before authentication)', () => {
  let s: TestServer;
  let anon: RequestAs;

  before(async () => {
    s = await startTestServer('console-static');
    anon = requestAs(s.url, anonymousIdentity());
  });
  after(async () => s.close());

  it('serves the page without credentials, revalidated every time, with a strict CSP', async () => {
    const res = await anon.get('/console/').expect(200);
    assert.match(res.headers['content-type'] as string, /^text\/html/);
    assert.equal(res.headers['cache-control'], 'no-cache');
    const csp = res.headers['content-security-policy'] as string;
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    const html = res.text;
    assert.doesNotMatch(html, /<script(?![^>]*\ssrc=)[^>]*>/, 'no inline script');
    assert.doesNotMatch(html, /https?:\/\//, 'no third-party URL in the page');
  });

  it('serves hashed assets immutable for a year, and 304 on a matching ETag', async () => {
    const html = (await anon.get('/console/').expect(200)).text;
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    assert.ok(script, html);
    const res = await anon.get(script).expect(200);
    assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.match(res.headers['content-type'] as string, /^text\/javascript/);
    await anon.get(script).set('If-None-Match', res.headers['etag'] as string).expect(304);
  });

  it('sends gzip to clients that accept it, as its own representation', async () => {
    const html = (await anon.get('/console/').expect(200)).text;
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const plain = await anon.get(script).set('Accept-Encoding', 'identity').expect(200);
    const zipped = await anon.get(script).set('Accept-Encoding', 'gzip, br').expect(200);
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(zipped.text, plain.text, 'the same script once decoded');
    assert.match(zipped.headers['vary'] as string, /Accept-Encoding/);
    assert.notEqual(zipped.headers['etag'], plain.headers['etag']);
  });

  it('names no OIDC issuer when none is configured, and lets the page fetch only its own origin', async () => {
    assert.deepEqual((await anon.get('/console/oidc.json').expect(200)).body, { issuers: [] });
    const csp = (await anon.get('/console/').expect(200)).headers['content-security-policy'] as string;
    assert.match(csp, /connect-src 'self';/);
  });

  it('answers deep links with the page, /console with a redirect, unknown assets 404, writes 405', async () => {
    const deep = await anon.get('/console/r/v1/configmaps').expect(200);
    assert.match(deep.text, /<div id="app">/);
    const redirect = await anon.get('/console').expect(301);
    assert.equal(redirect.headers['location'], '/console/');
    const missing = await anon.get('/console/assets/nope.js').expect(404);
    assert.equal(missing.body.kind, 'Status');
    const post = await anon.post('/console/').send('{}').expect(405);
    assert.equal(post.body.reason, 'MethodNotAllowed');
  });

  it('opens nothing else to anonymous users', async () => {
    await anon.get('/api/v1/namespaces').expect(403);
    await anon.get('/consolex').expect(403);
    await anon.get('/clusters/default/console/').expect(403);
  });
});
