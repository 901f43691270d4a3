#!/usr/bin/env node
// npm run test:compose: runs docker-compose.yml as a user does and checks it through the proxy (as root, on a
// Debian machine with no Docker daemon: scripts/container-stand-ins.sh sets podman up and builds stand-ins for
// the images the file names). Steps: build Plinth's image from the Dockerfile; `podman-compose up -d` on the
// file unchanged; the kubeconfig copied out of api-1 works with kubectl through the proxy on localhost:6443;
// CRUD and a watch, each kubectl a new connection (nginx spreads them over both replicas); a tenant on each
// shard (default and pg-2) with its advertised URL; an admission webhook in its own container on the project's
// network, registered in one tenant and called for its creates only; `restart api-1` under a resuming watch (a client that
// reconnects from its last resourceVersion, as client-go's RetryWatcher does): every create made meanwhile
// seen once, none lost; `down` then `up` keeps the data. Ends with `down` and the test's volumes removed.
// Environment: COMPOSE_TEST_KEEP=1 leaves the project running; COMPOSE_TEST_SKIP_STAND_INS=1 skips the set-up.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PROJECT = 'plinth-compose-test';
const BASE = 'https://localhost:6443';
const tmp = mkdtempSync(path.join(os.tmpdir(), 'plinth-compose-'));
const t0 = Date.now();
let failures = 0;

function log(msg) {
  process.stderr.write(`[compose ${((Date.now() - t0) / 1000).toFixed(0)}s] ${msg}\n`);
}
function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.status !== 0 && !opts.allowFail) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr?.slice(-2000)}`);
  return r;
}
const compose = (...args) => run('podman-compose', ['-p', PROJECT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
const container = (service) => `${PROJECT}_${service}_1`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(what, fn, ms = 180_000) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v !== false && v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}: ${last?.message ?? 'still false'}`);
    await sleep(1000);
  }
}
function check(name, ok, detail = '') {
  if (ok) log(`ok   ${name}`);
  else {
    failures++;
    log(`FAIL ${name} ${detail}`);
  }
}

let kubeconfig;
function kubectl(args, opts = {}) {
  return run('kubectl', ['--kubeconfig', kubeconfig, ...args], opts);
}
/** kubectl, retried while a replica is away (a refused connection); returns stdout. */
async function kubectlRetry(args) {
  return until(`kubectl ${args.join(' ')}`, () => kubectl(args).stdout, 60_000);
}

/** The client credentials of the kubeconfig, for Node's https. */
function tlsOf(file) {
  const kc = YAML.parse(readFileSync(file, 'utf8'));
  const ctx = kc.contexts.find((c) => c.name === kc['current-context']).context;
  const cluster = kc.clusters.find((c) => c.name === ctx.cluster).cluster;
  const user = kc.users.find((u) => u.name === ctx.user).user;
  const b64 = (v) => (v ? Buffer.from(v, 'base64') : undefined);
  return { server: cluster.server, ca: b64(cluster['certificate-authority-data']), cert: b64(user['client-certificate-data']), key: b64(user['client-key-data']), token: user.token };
}

function httpsJson(tls, method, p, body, timeoutMs = 10_000) {
  return new Promise((resolve, reject) => {
    const req = https.request(new URL(p, BASE), { method, ca: tls.ca, cert: tls.cert, key: tls.key, agent: false, headers: { 'content-type': 'application/json', ...(tls.token ? { authorization: `Bearer ${tls.token}` } : {}) }, timeout: timeoutMs }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** A watch that reconnects from the last resourceVersion it saw when its stream ends or fails. */
function resumingWatch(tls, p, fromRv) {
  const w = { events: [], reconnects: 0, stopped: false, rv: fromRv, errors: [] };
  const connect = () => {
    if (w.stopped) return;
    const req = https.get(new URL(`${p}?watch=true&allowWatchBookmarks=true&resourceVersion=${w.rv}`, BASE), { ca: tls.ca, cert: tls.cert, key: tls.key, agent: false }, (res) => {
      if (res.statusCode !== 200) {
        w.errors.push(`status ${res.statusCode}`);
        res.resume();
        res.on('end', again);
        return;
      }
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (c) => {
        buf += c;
        let i;
        while ((i = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          if (!line.trim()) continue;
          const e = JSON.parse(line);
          if (e.type === 'ERROR') {
            w.errors.push(JSON.stringify(e.object));
            continue;
          }
          w.rv = e.object.metadata.resourceVersion;
          if (e.type !== 'BOOKMARK') w.events.push({ type: e.type, name: e.object.metadata.name, rv: Number(e.object.metadata.resourceVersion) });
        }
      });
      res.on('end', again);
      res.on('error', again);
    });
    req.on('error', again);
    w.req = req;
  };
  let pending = false;
  function again() {
    if (w.stopped || pending) return;
    pending = true;
    w.reconnects++;
    setTimeout(() => {
      pending = false;
      connect();
    }, 500);
  }
  connect();
  w.stop = () => {
    w.stopped = true;
    w.req?.destroy();
  };
  return w;
}

async function waitForProxy() {
  await until('the kubeconfig in api-1', () => run('podman', ['cp', `${container('api-1')}:/data/kubeconfig`, path.join(tmp, 'kubeconfig')], { allowFail: true }).status === 0);
  kubeconfig = path.join(tmp, 'kubeconfig');
  // Ten answers in a row, each a new connection, so both replicas serve (nginx picks one per connection).
  let inARow = 0;
  await until('both replicas ready through the proxy', () => {
    inARow = kubectl(['get', '--raw', '/readyz'], { allowFail: true }).stdout.trim() === 'ok' ? inARow + 1 : 0;
    return inARow >= 10;
  });
}

// An admission webhook as users run one next to compose: its own container on the project's network,
// reached by name over TLS with the caBundle of a certificate made here, registered in tenant acme.
const WEBHOOK_SERVER = `import https from 'node:https';
import { readFileSync } from 'node:fs';
const tls = { key: readFileSync('/w/webhook.key'), cert: readFileSync('/w/webhook.crt') };
https.createServer(tls, (req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const review = JSON.parse(body);
    console.log('review ' + review.request.uid + ' ' + review.request.operation + ' ' + review.request.name);
    const patch = [{ op: 'add', path: '/metadata/labels', value: { webhook: 'called' } }];
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') } }));
  });
}).listen(8443, '0.0.0.0', () => console.log('webhook listening'));
`;

async function webhookInItsOwnContainer(tls) {
  const dir = path.join(tmp, 'webhook');
  run('mkdir', ['-p', dir]);
  writeFileSync(path.join(dir, 'webhook.mjs'), WEBHOOK_SERVER);
  run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=webhook', '-addext', 'subjectAltName=DNS:webhook', '-keyout', path.join(dir, 'webhook.key'), '-out', path.join(dir, 'webhook.crt')]);
  run('chmod', ['-R', 'a+rX', dir]);
  const network = run('podman', ['inspect', '--format', '{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}', container('api-1')]).stdout.trim().split(' ')[0];
  run('podman', ['rm', '-f', `${PROJECT}_webhook`], { allowFail: true });
  run('podman', ['run', '-d', '--name', `${PROJECT}_webhook`, '--network', network, '--network-alias', 'webhook', '-v', `${dir}:/w:ro`, 'node:20-bookworm-slim', 'node', '/w/webhook.mjs']);
  await until('the webhook container listening', () => run('podman', ['logs', `${PROJECT}_webhook`], { allowFail: true }).stdout.includes('webhook listening'), 60_000);
  const config = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: 'label-configmaps' },
    webhooks: [{
      name: 'label.compose.example.com',
      clientConfig: { url: 'https://webhook:8443/mutate', caBundle: readFileSync(path.join(dir, 'webhook.crt')).toString('base64') },
      rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      failurePolicy: 'Fail',
      timeoutSeconds: 10,
    }],
  };
  const created = await httpsJson(tls, 'POST', '/clusters/acme/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', config);
  check('the webhook registered in tenant acme', created.status === 201, JSON.stringify(created.body).slice(0, 300));
  // Both replicas learn of the configuration through the change stream: create until one is labelled, then each new one must be.
  let i = 0;
  const labelled = await until('a ConfigMap labelled by the webhook', async () => {
    const r = await httpsJson(tls, 'POST', '/clusters/acme/api/v1/namespaces/default/configmaps', { metadata: { name: `hooked-${i++}` } });
    return r.status === 201 && r.body.metadata.labels?.webhook === 'called' ? r.body : false;
  }, 60_000);
  const next = [];
  for (let j = 0; j < 6; j++) {
    const began = Date.now();
    const r = await httpsJson(tls, 'POST', '/clusters/acme/api/v1/namespaces/default/configmaps', { metadata: { name: `hooked-after-${j}` } }, 60_000).catch((err) => ({ status: 0, body: { message: String(err) } }));
    log(`create hooked-after-${j}: ${r.status} in ${Date.now() - began} ms`);
    next.push(r.body ?? {});
  }
  check('every create after that was labelled by the webhook container', next.every((o) => o.metadata?.labels?.webhook === 'called'), JSON.stringify(next.map((o) => o.metadata?.labels ?? o.message)));
  const calls = run('podman', ['logs', `${PROJECT}_webhook`]).stdout.split('\n').filter((l) => l.startsWith('review ') && l.includes(' CREATE hooked-'));
  check('the webhook container got an AdmissionReview for each', calls.length >= next.length + 1 && next.every((o) => calls.some((l) => l.endsWith(` ${o.metadata?.name}`))), `${calls.length} reviews; first labelled ${labelled.metadata.name}`);
  // A ConfigMap in globex is not sent to acme's webhook.
  const other = await httpsJson(tls, 'POST', '/clusters/globex/api/v1/namespaces/default/configmaps', { metadata: { name: 'not-hooked' } });
  check("globex's ConfigMaps are not sent to acme's webhook", other.status === 201 && !other.body.metadata.labels?.webhook, JSON.stringify(other.body.metadata?.labels));
  run('podman', ['rm', '-f', `${PROJECT}_webhook`], { allowFail: true });
}

async function main() {
  if (process.getuid?.() !== 0) throw new Error('run as root (podman without a daemon needs it here)');
  if (!process.env.COMPOSE_TEST_SKIP_STAND_INS) {
    log('container stand-ins (scripts/container-stand-ins.sh)');
    run('bash', ['scripts/container-stand-ins.sh'], { stdio: 'inherit' });
  }
  compose('down', '-v');
  log('building Plinth image (podman-compose build)');
  run('podman-compose', ['-p', PROJECT, 'build'], { stdio: 'inherit' });
  const size = run('podman', ['image', 'inspect', '--format', '{{.Size}}', `${PROJECT}_api-1`], { allowFail: true }).stdout.trim();
  log(`image ${PROJECT}_api-1: ${(Number(size) / 1e6).toFixed(0)} MB`);
  log('podman-compose up -d');
  compose('up', '-d');
  await waitForProxy();

  const kc = YAML.parse(readFileSync(kubeconfig, 'utf8'));
  log(`kubeconfig server: ${kc.clusters[0].cluster.server}`);
  check('the copied kubeconfig names the proxy on localhost:6443', kc.clusters[0].cluster.server === BASE, kc.clusters[0].cluster.server);
  const tls = tlsOf(kubeconfig);

  // CRUD through kubectl, each command a new connection (spread over both replicas by the proxy).
  await kubectlRetry(['create', 'namespace', 'demo']);
  // The list's resourceVersion (kubectl get -o json prints a client-side List without one).
  const startRv = (await until('the list of demo', async () => {
    const r = await httpsJson(tls, 'GET', '/api/v1/namespaces/demo/configmaps');
    return r.status === 200 ? r.body : false;
  }, 60_000)).metadata.resourceVersion;
  const watch = resumingWatch(tls, '/api/v1/namespaces/demo/configmaps', startRv);
  for (let i = 0; i < 10; i++) await kubectlRetry(['create', 'configmap', `crud-${i}`, '-n', 'demo', `--from-literal=i=${i}`]);
  await kubectlRetry(['patch', 'configmap', 'crud-0', '-n', 'demo', '--type=merge', '-p', '{"data":{"patched":"yes"}}']);
  const got = JSON.parse(await kubectlRetry(['get', 'configmap', 'crud-0', '-n', 'demo', '-o', 'json']));
  check('patch read back', got.data.patched === 'yes');
  await kubectlRetry(['delete', 'configmap', 'crud-9', '-n', 'demo']);
  const listed = JSON.parse(await kubectlRetry(['get', 'configmaps', '-n', 'demo', '-o', 'json'])).items.map((o) => o.metadata.name).filter((n) => n.startsWith('crud-'));
  check('list shows 9 of the 10 created', listed.length === 9, listed.join(','));
  await until('the watch to see the CRUD', () => watch.events.length >= 12, 30_000).catch(() => undefined);
  const crudSeen = watch.events.map((e) => `${e.type} ${e.name}`);
  check('the watch saw 10 ADDED, the MODIFIED and the DELETED', crudSeen.filter((e) => e.startsWith('ADDED crud-')).length === 10 && crudSeen.includes('MODIFIED crud-0') && crudSeen.includes('DELETED crud-9'), crudSeen.join(','));

  // A tenant on each shard.
  for (const [name, shard] of [['acme', 'default'], ['globex', 'pg-2']]) {
    writeFileSync(path.join(tmp, `${name}.yaml`), YAML.stringify({ apiVersion: 'tenancy.plinth.dev/v1beta1', kind: 'Tenant', metadata: { name }, spec: { shard } }));
    await kubectlRetry(['apply', '-f', path.join(tmp, `${name}.yaml`)]);
  }
  for (const name of ['acme', 'globex']) {
    const t = await until(`tenant ${name} Active`, async () => {
      const o = JSON.parse(kubectl(['get', 'tenant', name, '-o', 'json']).stdout);
      return o.status?.phase === 'Active' ? o : false;
    }, 60_000);
    check(`tenant ${name} on shard ${t.status.shard}, url ${t.status.url}`, t.status.url === `${BASE}/clusters/${name}`, JSON.stringify(t.status));
    await until(`a ConfigMap in ${name}`, async () => (await httpsJson(tls, 'POST', `/clusters/${name}/api/v1/namespaces/default/configmaps`, { metadata: { name: 'hello' }, data: { tenant: name } })).status === 201, 60_000);
  }
  const onPg2 = (tenant) => run('podman', ['exec', container('postgres-2'), 'psql', '-U', 'plinth', '-d', 'plinth', '-tAc', `SELECT count(*) FROM objects WHERE tenant = '${tenant}' AND resource = 'configmaps' AND name = 'hello'`]).stdout.trim();
  check('globex lives on postgres-2', onPg2('globex') === '1', onPg2('globex'));
  check('acme does not', onPg2('acme') === '0', onPg2('acme'));

  await webhookInItsOwnContainer(tls);

  // restart api-1 under a running watch: one that nginx sent to api-1 (told by api-1's established
  // connections on port 6443, /proc/net/tcp state 01: the watches are the only long-lived ones).
  const established = () => {
    const r = run('podman', ['exec', container('api-1'), 'cat', '/proc/net/tcp', '/proc/net/tcp6'], { allowFail: true }).stdout;
    return r.split('\n').filter((l) => / [0-9A-F]+:192B [0-9A-F]+:[0-9A-F]+ 01 /.test(l)).length;
  };
  const rvNow = (await httpsJson(tls, 'GET', '/api/v1/namespaces/demo/configmaps')).body.metadata.resourceVersion;
  let onApi1;
  for (let i = 0; i < 12 && !onApi1; i++) {
    const before = established();
    const w = resumingWatch(tls, '/api/v1/namespaces/demo/configmaps', rvNow);
    await sleep(1500);
    if (established() > before) onApi1 = w;
    else w.stop();
  }
  check('a watch held by api-1', onApi1 !== undefined);
  log('restart api-1 while creating ConfigMaps');
  let writing = true;
  const written = [];
  const writer = (async () => {
    for (let i = 0; writing || i < written.length + 1; i++) {
      const name = `during-${i}`;
      for (;;) {
        const r = await httpsJson(tls, 'POST', '/api/v1/namespaces/demo/configmaps', { metadata: { name } }).catch((err) => ({ status: 0, err }));
        if (r.status === 201 || r.status === 409) break;
        await sleep(200);
      }
      written.push(name);
      if (!writing) break;
      await sleep(100);
    }
  })();
  await sleep(2000);
  compose('restart', 'api-1');
  await until('api-1 serving again', () => run('podman', ['exec', container('api-1'), 'node', '-e', "fetch('https://127.0.0.1:6443/readyz').then(()=>process.exit(0),(e)=>process.exit(/fetch failed/.test(e.message)&&e.cause?.code!=='ECONNREFUSED'?0:1))"], { allowFail: true }).status === 0, 120_000);
  await sleep(3000);
  writing = false;
  await writer;
  await until('the watches to see every create', () => [watch, onApi1].filter(Boolean).every((w) => written.every((n) => w.events.some((e) => e.type === 'ADDED' && e.name === n))), 60_000).catch(() => undefined);
  const added = watch.events.filter((e) => e.type === 'ADDED' && e.name.startsWith('during-')).map((e) => e.name);
  check(`the watch saw each of the ${written.length} creates made across the restart once`, written.every((n) => added.filter((a) => a === n).length === 1) && added.length === written.length, `missing ${written.filter((n) => !added.includes(n)).join(',')}; seen ${added.length}`);
  const rvs = watch.events.map((e) => e.rv);
  const disorder = watch.events.filter((e, i) => i > 0 && e.rv <= watch.events[i - 1].rv).map((e) => `${e.type} ${e.name}@${e.rv}`);
  check('in resourceVersion order', disorder.length === 0, `out of order: ${disorder.join(', ')}; all: ${watch.events.map((e) => `${e.type[0]}:${e.name}@${e.rv}`).join(' ')}`);
  log(`watch reconnects: ${watch.reconnects}; errors: ${watch.errors.join(' | ') || 'none'}`);
  watch.stop();
  if (onApi1) {
    const seen = onApi1.events.filter((e) => e.type === 'ADDED' && e.name.startsWith('during-')).map((e) => e.name);
    check(`the watch on api-1 resumed (${onApi1.reconnects} reconnects) and saw each of the ${written.length} creates once`, onApi1.reconnects >= 1 && written.every((n) => seen.filter((a) => a === n).length === 1) && seen.length === written.length, `missing ${written.filter((n) => !seen.includes(n)).join(',')}; errors ${onApi1.errors.join(' | ')}`);
    onApi1.stop();
  }

  // down then up keeps the data.
  log('podman-compose down; up -d');
  compose('down');
  compose('up', '-d');
  await waitForProxy();
  const after = JSON.parse(await kubectlRetry(['get', 'configmaps', '-n', 'demo', '-o', 'json'])).items.map((o) => o.metadata.name);
  check('ConfigMaps kept over down/up', listed.every((n) => after.includes(n)) && written.every((n) => after.includes(n)), `${after.length} names`);
  const tenants = JSON.parse(await kubectlRetry(['get', 'tenants', '-o', 'json'])).items.map((o) => o.metadata.name);
  check('tenants kept over down/up', tenants.includes('acme') && tenants.includes('globex'), tenants.join(','));
  const hello = await until('globex reachable', async () => {
    const r = await httpsJson(tls, 'GET', '/clusters/globex/api/v1/namespaces/default/configmaps/hello');
    return r.status === 200 ? r.body : false;
  }, 60_000);
  check('globex ConfigMap kept', hello.data?.tenant === 'globex');
}

try {
  await main();
} catch (err) {
  failures++;
  log(`FAIL ${err.stack ?? err}`);
  for (const svc of ['api-1', 'api-2', 'proxy']) log(`--- ${svc} logs (tail)\n${run('podman', ['logs', '--tail', '30', container(svc)], { allowFail: true }).stderr}`);
} finally {
  if (!process.env.COMPOSE_TEST_KEEP) {
    run('podman', ['rm', '-f', `${PROJECT}_webhook`], { allowFail: true });
    compose('down', '-v');
    for (const v of ['pgdata', 'pgdata-2', 'plinth-data']) run('podman', ['volume', 'rm', '-f', `${PROJECT}_${v}`], { allowFail: true });
  }
}
log(failures === 0 ? 'compose: all checks passed' : `compose: ${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
