import { createHash, X509Certificate } from 'node:crypto';
import { type Agent, request } from 'undici';
import { type Browser, chromium, type Page } from 'playwright-core';
import { CHROMIUM } from '../test/console/console-browser.js';
import { benchAgent, benchCredentials, progress, runBenchmark, startBenchPostgres, startServerProcess, stopServerAndDatabase } from './bench-support.js';

const OBJECTS = Number(process.env.BENCH_CONSOLE_OBJECTS ?? 5000);
const RUNS = 5;
const CONCURRENCY = 8;

async function call(base: string, agent: Agent, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await request(`${base}${path}`, { method: method as 'POST', dispatcher: agent, body: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 200)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** A cluster-admin ServiceAccount token of the platform scope, made as README's "Web console" section says. */
async function consoleToken(base: string, agent: Agent): Promise<string> {
  await call(base, agent, 'POST', '/api/v1/namespaces/kube-system/serviceaccounts', { metadata: { name: 'console-admin' } });
  await call(base, agent, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    metadata: { name: 'console-admin' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'ServiceAccount', name: 'console-admin', namespace: 'kube-system' }],
  });
  const tr = await call(base, agent, 'POST', '/api/v1/namespaces/kube-system/serviceaccounts/console-admin/token', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} });
  return (tr['status'] as { token: string }).token;
}

async function createConfigMaps(base: string, agent: Agent): Promise<void> {
  await call(base, agent, 'POST', '/api/v1/namespaces', { metadata: { name: 'bench' } });
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < OBJECTS; i = next++) {
        await call(base, agent, 'POST', '/api/v1/namespaces/bench/configmaps', { metadata: { name: `cm-${String(i).padStart(5, '0')}`, labels: { app: 'bench' } }, data: { i: String(i) } });
        if (i % 1000 === 999) progress(`${i + 1} ConfigMaps created`);
      }
    }),
  );
}

/**
 * Chromium trusting the server's certificate by its public key: a page
 * with a certificate error (what `ignoreHTTPSErrors` gives) is never put
 * in the HTTP cache, which would hide what immutable caching saves.
 */
async function launchTrusting(): Promise<Browser> {
  const { pki } = await benchCredentials();
  const spki = new X509Certificate(pki.serving.certPem).publicKey.export({ type: 'spki', format: 'der' });
  const hash = createHash('sha256').update(spki).digest('base64');
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-background-networking', `--ignore-certificate-errors-spki-list=${hash}`] });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Bytes of response bodies received over the network for `page` (encoded; cache hits and 304s carry none), and how many responses had one. */
function transferred(page: Page): () => Promise<{ bytes: number; fetched: number }> {
  const sizes: Promise<number>[] = [];
  page.on('requestfinished', (r) => sizes.push(r.sizes().then((s) => s.responseBodySize, () => 0)));
  return async () => {
    // Cache hits report -1 (no body received); 304s report 0.
    const all = (await Promise.all(sizes)).filter((n) => n > 0);
    return { bytes: all.reduce((a, b) => a + b, 0), fetched: all.length };
  };
}

/** A cold first load of /console/ in a fresh context (bytes, requests, ms until the login form shows), then a warm one in the same context. */
async function firstLoad(browser: Browser, base: string): Promise<{ bytes: number; requests: number; ms: number; warmBytes: number; warmFetched: number }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const cold = transferred(page);
  let requests = 0;
  page.on('request', () => requests++);
  const t0 = performance.now();
  await page.goto(`${base}/console/`);
  await page.waitForSelector('#token');
  const ms = performance.now() - t0;
  await page.waitForLoadState('networkidle');
  const { bytes } = await cold();
  const page2 = await context.newPage();
  const warm = transferred(page2);
  await page2.goto(`${base}/console/`);
  await page2.waitForSelector('#token');
  await page2.waitForLoadState('networkidle');
  const w = await warm();
  await context.close();
  return { bytes, requests, ms, warmBytes: w.bytes, warmFetched: w.fetched };
}

/** Ms from opening the list of OBJECTS ConfigMaps (one page of all of them) until every row is rendered and the watch is on. */
async function listRender(page: Page, base: string): Promise<number> {
  await page.goto(`${base}/console/#/`);
  await page.waitForSelector('[data-testid=whoami] span');
  const t0 = performance.now();
  await page.goto(`${base}/console/#/r/v1/configmaps?ns=bench&limit=5000`);
  // A function, not a string: the console's CSP forbids the eval a string predicate needs.
  await page.waitForFunction(
    (n) => {
      const doc = (globalThis as unknown as { document: { querySelector(s: string): { textContent: string | null } | null } }).document;
      return doc.querySelector('[data-testid=count]')?.textContent === `${n} shown` && doc.querySelector('[data-testid=live].on') !== null;
    },
    OBJECTS,
    { timeout: 120_000, polling: 'raf' },
  );
  return performance.now() - t0;
}

/**
 * The console's first load (bytes and time, cold cache; then what a warm
 * reload asks again) and the time to render a list of BENCH_CONSOLE_OBJECTS
 * (5,000) ConfigMaps with their printer columns, in Debian's Chromium
 * against a real server on loopback.
 */
async function main(): Promise<void> {
  const pgPort = 59500 + (process.pid % 400);
  const apiPort = 20500 + (process.pid % 400);
  const db = await startBenchPostgres('console', pgPort);
  const server = await startServerProcess({ DATABASE_URL: db.url, PLINTH_DB_POOL_SIZE: '16' }, apiPort);
  const agent = await benchAgent({ connections: CONCURRENCY + 2 });
  const base = `https://127.0.0.1:${apiPort}`;
  const browser = await launchTrusting();
  try {
    const token = await consoleToken(base, agent);
    progress(`creating ${OBJECTS} ConfigMaps`);
    await createConfigMaps(base, agent);
    const loads = [];
    for (let i = 0; i < RUNS; i++) loads.push(await firstLoad(browser, base));
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${base}/console/`);
    await page.fill('#token', token);
    await page.click('button[type=submit]');
    const renders = [];
    for (let i = 0; i < RUNS; i++) renders.push(await listRender(page, base));
    console.log(`console first load (cold cache): ${loads[0]!.bytes} bytes received (gzip) in ${loads[0]!.requests} requests; ms to the login form: median ${median(loads.map((l) => l.ms)).toFixed(0)} (runs ${loads.map((l) => l.ms.toFixed(0)).join(', ')})`);
    console.log(`warm load (new tab, same browser): ${loads[0]!.warmBytes} bytes in ${loads[0]!.warmFetched} responses with a body (hashed assets come from the cache)`);
    console.log(`list of ${OBJECTS} ConfigMaps rendered and watching: median ${median(renders).toFixed(0)} ms (runs ${renders.map((r) => r.toFixed(0)).join(', ')})`);
  } finally {
    await browser.close();
    await agent.close();
    await stopServerAndDatabase(server, db);
  }
}

runBenchmark(main);
