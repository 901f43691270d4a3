import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import type { Browser } from 'playwright-core';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { launchChromium, logIn, openConsole } from './console-browser.js';

const TOKEN = 'console-crafted-links-token-0123456789';

// The hash of a console link is the sender's text: its group, version, resource, namespace and name must never steer
// the signed-in user's API calls (with their token) to another path of the same origin.
describe('the web console and crafted links, in Chromium', { timeout: 120_000 }, () => {
  let s: TestServer;
  let browser: Browser;

  before(async () => {
    const tokenFile = path.join(mkdtempSync(path.join(tmpdir(), 'plinth-console-links-')), 'tokens.csv');
    writeFileSync(tokenFile, `${TOKEN},plinth-ops,ops-1,"system:masters"\n`);
    s = await startTestServer('console_links', { PLINTH_TOKEN_AUTH_FILE: tokenFile });
    await request(s.url).post('/api/v1/namespaces/default/secrets').send({ metadata: { name: 'planted' }, stringData: { password: 'hunter2' } }).expect(201);
    await request(s.url).post('/api/v1/namespaces/default/configmaps').send({ metadata: { name: 'cm' }, data: { a: 'b' } }).expect(201);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  it('calls only the paths of resources discovery returned, each segment encoded; a crafted group, version, resource or name calls nothing', async () => {
    const { page, context } = await openConsole(browser, s.url);
    const called: string[] = [];
    page.on('request', (r) => {
      const u = new URL(r.url());
      if (u.origin === s.url) called.push(`${r.method()} ${u.pathname}${u.search}`);
    });
    await logIn(page, s.url, TOKEN);
    const crafted = [
      // gv `../api/v1/namespaces/default/secrets/planted?`: /apis/../api/… resolves to the Secret, the rest is its query.
      `#/r/${encodeURIComponent('../api/v1/namespaces/default/secrets/planted?')}/configmaps`,
      `#/o/${encodeURIComponent('..')}/${encodeURIComponent('api/v1/namespaces/default/secrets/planted?')}/_/x`,
      `#/r/v1/${encodeURIComponent('secrets/planted?')}`,
      `#/o/v1/${encodeURIComponent('namespaces/default/secrets/planted?')}/_/x`,
      // A served resource, but a name that the browser would resolve away (`..`, even encoded).
      `#/o/v1/configmaps/default/${encodeURIComponent('..')}`,
      `#/o/v1/configmaps/${encodeURIComponent('..')}/${encodeURIComponent('..')}`,
    ];
    for (const hash of crafted) {
      called.length = 0;
      await page.goto(`${s.url}/console/${hash}`);
      await page.waitForSelector('[data-testid=problem]');
      // Let any request the route would make go out before looking.
      await page.waitForTimeout(300);
      assert.ok(!called.some((c) => /secrets|\/namespaces\/default\/configmaps\/?(\?|$)/.test(c)), `${hash} called: ${called.join(', ')}`);
      const text = (await page.textContent('[data-testid=problem]')) ?? '';
      assert.match(text, /serves no resource|not a valid name/, hash);
      const stray = called.filter((c) => !/^GET \/(console\/|apis?(\/|$)|apis\/[^/]+\/[^/]+$|api\/v1$|apis\/authentication\.k8s\.io\/v1\/selfsubjectreviews)/.test(c) && !c.startsWith('POST /apis/authentication.k8s.io/v1/selfsubjectreviews'));
      assert.deepEqual(stray, [], `${hash}: only the console, discovery and whoami were called`);
    }
    // A real link still works, its segments encoded.
    called.length = 0;
    await page.goto(`${s.url}/console/#/o/v1/configmaps/default/cm`);
    await page.waitForSelector('[data-testid=yaml]');
    assert.ok(called.includes('GET /api/v1/namespaces/default/configmaps/cm'), called.join(', '));
    await page.goto(`${s.url}/console/#/r/v1/configmaps?ns=default`);
    await page.waitForSelector('[data-testid=list] tbody tr');
    assert.ok(called.some((c) => c.startsWith('GET /api/v1/namespaces/default/configmaps?')), called.join(', '));
    await context.close();
  });
});
