import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import type { Browser } from 'playwright-core';
import { CertificateAuthority } from '../../apps/api/src/pki/certificate-authority.js';
import { anonymousIdentity, requestAs } from '../support/credentials.js';
import { grantClusterRole } from '../support/rbac.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { axeViolations, describeViolations, launchChromium, openConsole, screenshot } from './console-browser.js';
import { PkceIssuer } from './pkce-issuer.js';

describe('console login with an OIDC issuer: authorization code with PKCE', () => {
  let s: TestServer;
  let browser: Browser;
  const issuer = new PkceIssuer({ email: 'jane@example.com', email_verified: true, sub: 'u-jane' });

  before(async () => {
    const ca = await CertificateAuthority.generate('issuer-ca');
    await issuer.start(ca);
    const dir = mkdtempSync(path.join(tmpdir(), 'plinth-console-oidc-'));
    const file = path.join(dir, 'authn.yaml');
    writeFileSync(
      file,
      stringify({
        apiVersion: 'apiserver.config.k8s.io/v1beta1',
        kind: 'AuthenticationConfiguration',
        jwt: [{ issuer: { url: issuer.url, audiences: ['plinth-console'], certificateAuthority: ca.certPem }, claimMappings: { username: { claim: 'email', prefix: 'oidc:' } } }],
      }),
    );
    s = await startTestServer('console_oidc', { PLINTH_AUTHENTICATION_CONFIG: file });
    await grantClusterRole(s.url, 'jane-view', 'view', [{ kind: 'User', name: 'oidc:jane@example.com' }]);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await s?.close();
    await issuer.close();
  });

  it('names the issuer in /console/oidc.json and lets the CSP reach it and nothing else', async () => {
    const anon = requestAs(s.url, anonymousIdentity());
    const res = await anon.get('/console/oidc.json').expect(200);
    assert.deepEqual(res.body, { issuers: [{ issuer: issuer.url, clientId: 'plinth-console' }] });
    const csp = (await anon.get('/console/').expect(200)).headers['content-security-policy'] as string;
    assert.match(csp, new RegExp(`connect-src 'self' ${issuer.url.replace(/[.]/g, '\\.')}(;|$)`));
  });

  it('logs in through the issuer with S256 PKCE; the ID token never appears in a URL', async () => {
    const { page } = await openConsole(browser, s.url);
    const urls: string[] = [];
    page.on('request', (r) => urls.push(r.url()));
    await page.goto(`${s.url}/console/`);
    await page.click(`button:has-text("Log in with ${issuer.url}")`);
    await page.waitForSelector('[data-testid=whoami] span');
    assert.match((await page.textContent('[data-testid=whoami]')) ?? '', /oidc:jane@example\.com/);
    assert.deepEqual(issuer.challengeMethods, ['S256']);
    assert.deepEqual(issuer.refused, []);
    assert.equal(new URL(page.url()).search, '', 'code and state are gone from the address bar');
    const token = (await page.evaluate('sessionStorage.getItem("plinth.console.session")')) as string;
    const idToken = (JSON.parse(token) as { token: string }).token;
    assert.ok(idToken.split('.').length === 3);
    assert.ok(urls.every((u) => !u.includes(idToken)), 'the ID token is never in a URL');
    assert.equal(await page.evaluate('localStorage.length'), 0);
    const vs = await axeViolations(page);
    assert.equal(vs.length, 0, describeViolations(vs));
    await screenshot(page, 'oidc-logged-in');
  });
});
