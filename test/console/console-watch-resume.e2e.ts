import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { eventually } from '../support/eventually.js';
import { kubectl, type KubectlResult, writeTestKubeconfig } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { launchChromium, logIn, openConsole } from './console-browser.js';

function ok(r: KubectlResult): string {
  assert.equal(r.code, 0, `kubectl failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

describe('console watches that the server ends are resumed', () => {
  let s: TestServer;
  let browser: Browser;
  let kc: string;
  let token: string;

  before(async () => {
    // Every watch ends within 1 to 2 seconds (half to all of PLINTH_MAX_WATCH_SECONDS).
    s = await startTestServer('console_watch', { PLINTH_MAX_WATCH_SECONDS: '2' });
    kc = writeTestKubeconfig(s.url);
    ok(await kubectl(kc, ['create', 'serviceaccount', 'console-admin', '-n', 'kube-system']));
    ok(await kubectl(kc, ['create', 'clusterrolebinding', 'console-admin', '--clusterrole=cluster-admin', '--serviceaccount=kube-system:console-admin']));
    token = ok(await kubectl(kc, ['create', 'token', 'console-admin', '-n', 'kube-system'])).trim();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  it('a list keeps showing changes after its first watch ended: it lists and watches again', async () => {
    const { page } = await openConsole(browser, s.url);
    const watches: string[] = [];
    page.on('request', (r) => {
      if (/[?&]watch=1/.test(r.url()) && r.url().includes('/configmaps')) watches.push(r.url());
    });
    await logIn(page, s.url, token);
    await page.goto(`${s.url}/console/#/r/v1/configmaps?ns=default`);
    await page.waitForSelector('[data-testid=live].on');
    await eventually(() => watches.length >= 2, { timeoutMs: 30_000, intervalMs: 200, message: 'a second watch after the first ended' });
    ok(await kubectl(kc, ['create', 'configmap', 'after-the-first-watch', '-n', 'default']));
    await page.waitForSelector('[data-testid=list] a:has-text("after-the-first-watch")');
  });

  it('the tenants of the platform view too', async () => {
    const { page } = await openConsole(browser, s.url);
    const watches: string[] = [];
    page.on('request', (r) => {
      if (/[?&]watch=1/.test(r.url()) && r.url().includes('/tenants')) watches.push(r.url());
    });
    await logIn(page, s.url, token);
    await page.waitForSelector('[data-testid=tenants] tr[data-tenant=default]');
    await eventually(() => watches.length >= 2, { timeoutMs: 30_000, intervalMs: 200, message: 'a second tenants watch after the first ended' });
    ok(await kubectl(kc, ['create', '-f', '-'], 'apiVersion: tenancy.plinth.dev/v1beta1\nkind: Tenant\nmetadata:\n  name: late\nspec:\n  owners:\n  - kind: User\n    name: someone\n'));
    await page.waitForSelector('[data-testid=tenants] tr[data-tenant=late]');
  });
});
