import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import type { Browser } from 'playwright-core';
import { eventually } from '../support/eventually.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { axeViolations, describeViolations, launchChromium, logIn, openConsole } from './console-browser.js';

const TOKEN = 'console-snapshots-token-0123456789';
const TENANTS = '/apis/tenancy.plinth.dev/v1beta1/tenants';

describe('the web console: a tenant\'s snapshots and restoring one into a new tenant, in Chromium', { timeout: 150_000 }, () => {
  let s: TestServer;
  let browser: Browser;

  before(async () => {
    const tmp = mkdtempSync(path.join(tmpdir(), 'plinth-console-snapshots-'));
    const tokenFile = path.join(tmp, 'tokens.csv');
    writeFileSync(tokenFile, `${TOKEN},plinth-ops,ops-1,"system:masters"\n`);
    s = await startTestServer('console_snapshots', { PLINTH_TOKEN_AUTH_FILE: tokenFile, PLINTH_SNAPSHOT_DIR: path.join(tmp, 'snapshots') });
    // Every two seconds until two snapshots exist, then suspended: the list the console shows is then fixed.
    await request(s.url).post(TENANTS).send({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name: 'acme' }, spec: { snapshots: { schedule: '*/2 * * * * *', keep: 5 } } }).expect(201);
    await eventually(async () => (await request(s.url).get(`${TENANTS}/acme`)).body.status?.phase === 'Active', { message: 'acme Active' });
    await request(s.url).post('/clusters/acme/api/v1/namespaces').send({ metadata: { name: 'shop' } }).expect(201);
    await request(s.url).post('/clusters/acme/api/v1/namespaces/shop/configmaps').send({ metadata: { name: 'prices' }, data: { apple: '3' } }).expect(201);
    await eventually(async () => (await request(s.url).get(`${TENANTS}/acme/snapshots`).expect(200)).body.items.length >= 2, { message: 'two snapshots of acme', timeoutMs: 60_000 });
    await request(s.url).patch(`${TENANTS}/acme`).set('Content-Type', 'application/merge-patch+json').send({ spec: { snapshots: { suspend: true } } }).expect(200);
    await eventually(async () => (await request(s.url).get(`${TENANTS}/acme`)).body.status.conditions.find((c: { type: string }) => c.type === 'SnapshotSucceeded')?.status === 'True', {
      message: 'the last run ended',
      timeoutMs: 30_000,
    });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  it('lists a tenant\'s snapshots from the target and restores one into a new tenant whose restore shows in the list', async () => {
    const { page, context, watch } = await openConsole(browser, s.url);
    await logIn(page, s.url, TOKEN);
    await page.click('button[aria-label="Snapshots of tenant acme"]');
    await page.waitForSelector('[data-testid=snapshot-list] tbody tr');
    const listed = await page.$$eval('[data-testid=snapshot-list] tbody tr', (rows) => rows.map((r) => r.getAttribute('data-snapshot')));
    const stored = (await request(s.url).get(`${TENANTS}/acme/snapshots`).expect(200)).body.items.map((i: { location: string }) => i.location);
    assert.deepEqual(listed, stored, 'the console lists what the target holds, newest first');
    assert.ok(listed.length >= 2);
    const vs = await axeViolations(page);
    assert.equal(vs.length, 0, `snapshot list: ${describeViolations(vs)}`);

    const newest = listed[0]!;
    await page.click(`button[aria-label="Restore ${newest}"]`);
    await page.fill('#restore-name', 'acme-restored');
    await page.click(`form[aria-label="Restore ${newest}"] button[type=submit]`);
    await page.waitForSelector('form[aria-label^="Restore"] [role=status]');
    assert.match((await page.textContent('form[aria-label^="Restore"] [role=status]')) ?? '', /Tenant acme-restored created/);
    // The new tenant appears in the watched list and shows its restore's outcome.
    await page.waitForSelector('tr[data-tenant=acme-restored] [data-testid=source-restored]', { timeout: 60_000 });
    await eventually(async () => /restore: Restored/.test((await page.textContent('tr[data-tenant=acme-restored]')) ?? ''), { message: 'the row shows the restore done', timeoutMs: 60_000 });
    const t = (await request(s.url).get(`${TENANTS}/acme-restored`).expect(200)).body;
    assert.equal(t.spec.source.snapshot, newest);
    const cm = (await request(s.url).get('/clusters/acme-restored/api/v1/namespaces/shop/configmaps/prices').expect(200)).body;
    assert.deepEqual(cm.data, { apple: '3' });

    // A name the server refuses is shown, and nothing is created.
    await page.fill('#restore-name', 'Not_A_Name');
    await page.click(`form[aria-label="Restore ${newest}"] button[type=submit]`);
    await page.waitForSelector('form[aria-label^="Restore"] [data-testid=problem]');
    await request(s.url).get(`${TENANTS}/Not_A_Name`).expect(404);
    assert.deepEqual(watch.problems, []);
    await context.close();
  });
});
