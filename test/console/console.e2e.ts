import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { eventually } from '../support/eventually.js';
import { kubectl, type KubectlResult, writeTestKubeconfig } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { axeViolations, describeViolations, launchChromium, logIn, openConsole, type PageWatch, screenshot } from './console-browser.js';

function ok(r: KubectlResult): string {
  assert.equal(r.code, 0, `kubectl failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

const tenant = (name: string, owner: string) => `apiVersion: tenancy.plinth.dev/v1beta1
kind: Tenant
metadata:
  name: ${name}
spec:
  owners:
  - kind: User
    name: ${owner}
  limits:
    objects: 500
    objectsPerResource:
      configmaps: 200
`;

const POLICY = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: cm-size
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["configmaps"]
  validations:
  - expression: "!has(object.data) || size(object.data) < 100"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: cm-size
spec:
  policyName: cm-size
  validationActions: [Deny]
`;

const MASTERS_TOKEN = 'console-e2e-masters-token-0123456789';

/** Fails with axe's findings when the page has any. */
async function assertAccessible(page: Page, what: string): Promise<void> {
  const vs = await axeViolations(page);
  assert.equal(vs.length, 0, `${what}: ${describeViolations(vs)}`);
}

describe('the web console in Chromium, against a real server', () => {
  let s: TestServer;
  let browser: Browser;
  let platform: string;
  let acme: string;
  let adminToken: string;
  let ownerToken: string;
  let viewerToken: string;
  const watches: PageWatch[] = [];
  const eventuallyLong = { timeoutMs: 30_000, intervalMs: 200 };

  before(async () => {
    // A static token of system:masters: a platform administrator's identity that every tenant accepts.
    const tokenFile = path.join(mkdtempSync(path.join(tmpdir(), 'plinth-console-tokens-')), 'tokens.csv');
    writeFileSync(tokenFile, `${MASTERS_TOKEN},plinth-ops,ops-1,"system:masters"\n`);
    s = await startTestServer('console', { PLINTH_TOKEN_AUTH_FILE: tokenFile });
    platform = writeTestKubeconfig(s.url);
    acme = writeTestKubeconfig(`${s.url}/clusters/acme`);
    const globex = writeTestKubeconfig(`${s.url}/clusters/globex`);
    // The platform administrator's console identity: a ServiceAccount of the platform scope bound to cluster-admin.
    ok(await kubectl(platform, ['create', 'serviceaccount', 'console-admin', '-n', 'kube-system']));
    ok(await kubectl(platform, ['create', 'clusterrolebinding', 'console-admin', '--clusterrole=cluster-admin', '--serviceaccount=kube-system:console-admin']));
    adminToken = ok(await kubectl(platform, ['create', 'token', 'console-admin', '-n', 'kube-system'])).trim();
    ok(await kubectl(platform, ['create', '-f', '-'], tenant('acme', 'system:serviceaccount:default:owner')));
    ok(await kubectl(platform, ['create', '-f', '-'], tenant('globex', 'someone-else')));
    ok(await kubectl(acme, ['create', 'namespace', 'acme-team']));
    ok(await kubectl(globex, ['create', 'namespace', 'globex-team']));
    ok(await kubectl(acme, ['create', 'serviceaccount', 'owner']));
    ok(await kubectl(acme, ['create', 'serviceaccount', 'viewer']));
    ownerToken = ok(await kubectl(acme, ['create', 'token', 'owner'])).trim();
    viewerToken = ok(await kubectl(acme, ['create', 'token', 'viewer'])).trim();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  async function open(token: string, tenantName?: string): Promise<Page> {
    const { page, watch } = await openConsole(browser, s.url);
    watches.push(watch);
    await logIn(page, s.url, token, tenantName);
    return page;
  }

  it('the platform administrator logs in with a ServiceAccount token and sees every tenant with its usage', async () => {
    const page = await open(adminToken);
    assert.match(await page.textContent('[data-testid=whoami]') ?? '', /system:serviceaccount:kube-system:console-admin/);
    await page.waitForSelector('[data-testid=tenants] tr[data-tenant=acme]');
    await page.waitForSelector('[data-testid=tenants] tr[data-tenant=globex]');
    const row = await page.textContent('tr[data-tenant=acme]');
    assert.match(row ?? '', /User:system:serviceaccount:default:owner/);
    assert.match(row ?? '', /objects: \d+ \/ 500/);
    await assertAccessible(page, 'tenants');
    await screenshot(page, 'platform-tenants');
  });

  it('a bad tenant spec shows the server\'s errors at their fields (dry run)', async () => {
    const page = await open(adminToken);
    await page.fill('#t-name', 'bad-one');
    await page.fill('#t-owners', 'Robot:r2d2');
    await page.fill('#t-objects', '-1');
    await page.click('text=Check (dry run)');
    const objects = await page.waitForSelector('#err-spec\\.limits\\.objects');
    assert.match((await objects.textContent()) ?? '', /spec\.limits\.objects/);
    const owners = await page.waitForSelector('#err-spec\\.owners');
    assert.match((await owners.textContent()) ?? '', /spec\.owners\[0\]\.kind/);
    const got = await kubectl(platform, ['get', 'tenant', 'bad-one']);
    assert.notEqual(got.code, 0, 'the dry run created nothing');
    await assertAccessible(page, 'tenant form with errors');
    await screenshot(page, 'platform-tenant-errors', { docs: true });
  });

  it('creates a tenant through the form after a dry run, then deletes it with confirmation and shows it terminating', async () => {
    const page = await open(adminToken);
    await page.fill('#t-name', 'scratch');
    await page.fill('#t-owners', 'User:tester');
    await page.click('text=Check (dry run)');
    await page.click('button:has-text("Create")');
    await page.waitForSelector('tr[data-tenant=scratch]');
    ok(await kubectl(platform, ['get', 'tenant', 'scratch']));
    await page.click('button[aria-label="Delete tenant scratch"]');
    await page.fill('#confirm-name', 'scratch');
    await page.click('button:has-text("Delete tenant")');
    // Read without waiting (the row may go at any moment): its text while it is there, nothing once it is gone.
    const rowText = async () => (await page.locator('tr[data-tenant=scratch]').allTextContents()).join('');
    await eventually(async () => /Terminating/.test(await rowText()) || (await rowText()) === '', { ...eventuallyLong, message: 'tenant scratch shows Terminating (or is gone)' });
    await eventually(async () => (await rowText()) === '', { ...eventuallyLong, message: 'tenant scratch leaves the list once deleted' });
    assert.match((await kubectl(platform, ['get', 'tenant', 'scratch'])).stderr, /NotFound/);
  });

  it('opens a tenant from the platform view with the same token, and comes back', async () => {
    const page = await open(MASTERS_TOKEN);
    await page.click('button[aria-label="Open tenant acme"]');
    await page.waitForSelector('.scope:has-text("tenant acme")');
    await page.waitForSelector('[data-testid=list] a:has-text("acme-team")');
    assert.match((await page.textContent('[data-testid=whoami]')) ?? '', /plinth-ops/);
    await page.click('button:has-text("Back to the platform scope")');
    await page.waitForSelector('[data-testid=tenants] tr[data-tenant=globex]');
    // A ServiceAccount token of the platform scope is worth nothing in a tenant: the server's 401 shows.
    const sa = await open(adminToken);
    await sa.click('button[aria-label="Open tenant acme"]');
    assert.match((await (await sa.waitForSelector('[data-testid=problem]')).textContent()) ?? '', /401 Unauthorized/);
  });

  it('a tenant owner sees only their tenant', async () => {
    const page = await open(ownerToken);
    assert.match(await page.textContent('[data-testid=whoami]') ?? '', /system:serviceaccount:default:owner/);
    assert.match(await page.textContent('.scope') ?? '', /tenant acme/);
    assert.equal(await page.$('a:has-text("Tenants")'), null, 'no platform view');
    await page.waitForSelector('[data-testid=list] a:has-text("acme-team")');
    assert.equal(await page.$('[data-testid=list] a:has-text("globex-team")'), null);
    await assertAccessible(page, 'namespaces');
    await screenshot(page, 'tenant-namespaces');
  });

  it('a ConfigMap created with kubectl appears without reload; an edit through the console reads back with kubectl', async () => {
    const page = await open(ownerToken);
    await page.goto(`${s.url}/console/#/r/v1/configmaps?ns=acme-team`);
    await page.waitForSelector('[data-testid=live].on');
    assert.equal(await page.inputValue('#limit'), '200', 'the default page size');
    ok(await kubectl(acme, ['create', 'configmap', 'web', '-n', 'acme-team', '--from-literal=color=blue']));
    await page.waitForSelector('[data-testid=list] a:has-text("web")');
    await assertAccessible(page, 'configmaps list');
    await screenshot(page, 'tenant-configmaps', { docs: true });
    await page.click('[data-testid=list] a:has-text("web")');
    await page.waitForSelector('[data-testid=yaml]');
    assert.doesNotMatch(await page.textContent('[data-testid=yaml]') ?? '', /managedFields/, 'managedFields folded away');
    await assertAccessible(page, 'object');
    await screenshot(page, 'tenant-object');
    await page.click('button:has-text("Edit")');
    const yaml = await page.inputValue('#editor');
    await page.fill('#editor', yaml.replace(/^data:\n/m, 'data:\n  size: large\n'));
    await page.click('text=Preview changes (dry run)');
    await page.waitForSelector('[data-testid=diff] .add');
    assert.match(await page.textContent('[data-testid=diff]') ?? '', /\+ {3}size: large/);
    await screenshot(page, 'tenant-edit-diff');
    await page.click('button:has-text("Save")');
    await page.waitForSelector('text=Saved');
    assert.equal(ok(await kubectl(acme, ['get', 'cm', 'web', '-n', 'acme-team', '-o', 'jsonpath={.data.size}'])), 'large');
  });

  it('a conflicting field shows its manager, and force takes it over', async () => {
    const page = await open(ownerToken);
    ok(await kubectl(acme, ['apply', '--server-side', '--field-manager=team-tool', '-f', '-'], 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n  namespace: acme-team\ndata:\n  color: blue\n'));
    await page.goto(`${s.url}/console/#/o/v1/configmaps/acme-team/shared`);
    await page.click('button:has-text("Edit")');
    const yaml = await page.inputValue('#editor');
    await page.fill('#editor', yaml.replace('color: blue', 'color: red'));
    await page.click('text=Preview changes (dry run)');
    const problem = await page.waitForSelector('[data-testid=problem]');
    const text = (await problem.textContent()) ?? '';
    assert.match(text, /409 Conflict/);
    assert.match(text, /\.data\.color.*conflict with "team-tool"/);
    await assertAccessible(page, 'conflict');
    await screenshot(page, 'tenant-conflict', { docs: true });
    await page.click('text=Save and take over the fields (force)');
    await page.waitForSelector('text=Saved');
    assert.equal(ok(await kubectl(acme, ['get', 'cm', 'shared', '-n', 'acme-team', '-o', 'jsonpath={.data.color}'])), 'red');
  });

  it('filters by label selector and pages with limit/continue', async () => {
    const items = Array.from({ length: 60 }, (_, i) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `bulk-${String(i).padStart(2, '0')}`, namespace: 'acme-team', labels: { tier: 'bulk' } } }));
    ok(await kubectl(acme, ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items })));
    const page = await open(ownerToken);
    await page.goto(`${s.url}/console/#/r/v1/configmaps?ns=acme-team&l=tier%3Dbulk&limit=50`);
    await page.waitForSelector('[data-testid=count]:has-text("50 shown")');
    assert.equal(await page.inputValue('#limit'), '50', 'the page size shown is the one in use');
    assert.equal(await page.$('[data-testid=list] a:has-text("web")'), null, 'the selector leaves out unlabelled objects');
    await page.click('button:has-text("Next page")');
    await page.waitForSelector('[data-testid=count]:has-text("10 shown")');
    await page.waitForSelector('[data-testid=list] a:has-text("bulk-59")');
    await page.click('button:has-text("Previous page")');
    await page.waitForSelector('[data-testid=list] a:has-text("bulk-00")');
  });

  it('deletes an object with the cascade chosen (orphan keeps its dependents)', async () => {
    const page = await open(ownerToken);
    ok(await kubectl(acme, ['create', 'configmap', 'doomed', '-n', 'acme-team']));
    const uid = ok(await kubectl(acme, ['get', 'cm', 'doomed', '-n', 'acme-team', '-o', 'jsonpath={.metadata.uid}']));
    const child = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'child', namespace: 'acme-team', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'doomed', uid }] } };
    ok(await kubectl(acme, ['create', '-f', '-'], JSON.stringify(child)));
    await page.goto(`${s.url}/console/#/o/v1/configmaps/acme-team/doomed`);
    await page.click('.actions button:has-text("Delete")');
    await page.check('input[value=Orphan]');
    await assertAccessible(page, 'delete dialog');
    await page.click('form.confirm button[type=submit]');
    await page.waitForSelector('[data-testid=list]');
    await eventually(async () => /NotFound/.test((await kubectl(acme, ['get', 'cm', 'doomed', '-n', 'acme-team'])).stderr), { ...eventuallyLong, message: 'doomed is gone' });
    // Orphan: the dependent stays, without its owner reference.
    await eventually(async () => ok(await kubectl(acme, ['get', 'cm', 'child', '-n', 'acme-team', '-o', 'jsonpath={.metadata.ownerReferences}'])) === '', { ...eventuallyLong, message: 'child orphaned' });
  });

  it('a forbidden user sees the server\'s forbidden message', async () => {
    const page = await open(viewerToken);
    await page.goto(`${s.url}/console/#/r/v1/configmaps?ns=acme-team`);
    const problem = await page.waitForSelector('[data-testid=problem]');
    assert.match((await problem.textContent()) ?? '', /403 Forbidden: configmaps is forbidden: User "system:serviceaccount:default:viewer" cannot list resource "configmaps"/);
    await assertAccessible(page, 'forbidden');
    await screenshot(page, 'tenant-forbidden');
  });

  it('shows what the user can do (SelfSubjectRulesReview) and the admission view', async () => {
    const page = await open(ownerToken);
    await page.goto(`${s.url}/console/#/access?ns=acme-team`);
    await page.waitForSelector('[data-testid=rules] td');
    assert.match(await page.textContent('[data-testid=rules]') ?? '', /\*/);
    await assertAccessible(page, 'access');
    await screenshot(page, 'tenant-access');
    await page.goto(`${s.url}/console/#/admission`);
    await page.waitForSelector('h2:has-text("Validating admission policies") + p');
    await assertAccessible(page, 'admission');
    await screenshot(page, 'tenant-admission');
  });

  it('the admission view shows a policy of the tenant with its calls from the metrics', async () => {
    ok(await kubectl(acme, ['apply', '-f', '-'], POLICY));
    const page = await open(MASTERS_TOKEN);
    await page.click('button[aria-label="Open tenant acme"]');
    await page.waitForSelector('.scope:has-text("tenant acme")');
    await page.goto(`${s.url}/console/#/admission`);
    let n = 0;
    const calls = await eventually(async () => {
      // Each try writes a ConfigMap the policy checks (the policy takes effect once loaded), then reads the view afresh.
      await kubectl(acme, ['create', 'configmap', `checked-${n++}`, '-n', 'acme-team']);
      await page.reload();
      const cell = await page.waitForSelector('tr[data-admission=cm-size] [data-testid=calls]:not(:has-text("–"))');
      const total = Number(((await cell.textContent()) ?? '').split('/')[1]);
      return total > 0 && total;
    }, { ...eventuallyLong, message: 'the policy\'s calls show' });
    assert.ok(calls >= 1);
    await assertAccessible(page, 'admission with a policy');
    await screenshot(page, 'tenant-admission-policy');
  });

  it('no page broke the CSP, threw, or asked another origin for anything', () => {
    assert.deepEqual(watches.flatMap((w) => w.problems), []);
  });
});
