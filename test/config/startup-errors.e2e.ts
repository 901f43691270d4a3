import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type EmbeddedDatabase, startEmbeddedPostgres } from '@plinth/storage';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

const MAIN = path.join(process.cwd(), 'dist/apps/api/src/main.js');

interface Outcome {
  code: number | null;
  stderr: string;
}

/** Runs `npm start`'s entry point with `env` (and nothing of this process's Plinth settings) until it exits. */
function start(env: Record<string, string>): Promise<Outcome> {
  const base = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'fatal' };
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN], { env: { ...base, ...env }, timeout: 90_000 }, (err, _stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : null) : 0;
      resolve({ code, stderr: String(stderr) });
    });
  });
}

/** A loopback port something else listens on, until `close()`. */
async function takenPort(): Promise<{ port: number; close: () => Promise<void> }> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return { port: (srv.address() as net.AddressInfo).port, close: () => new Promise((r) => srv.close(() => r())) };
}

async function freePort(): Promise<number> {
  const p = await takenPort();
  await p.close();
  return p.port;
}

const tmp = (label: string) => mkdtempSync(path.join(tmpdir(), `plinth-startup-${label}-`));

/** The one line the process printed for its failure. */
function failureLine(o: Outcome): string {
  const line = o.stderr.split('\n').find((l) => l.startsWith('plinth: '));
  assert.ok(line, `no "plinth: " line in: ${o.stderr}`);
  return line;
}

// Each start-up failure names what failed, where, and the setting that changes it; exit code 2 when a setting must
// change, 1 when something outside failed (docs/configuration.md).
describe('start-up failures', () => {
  let db: TestDatabase;

  before(async () => {
    db = await createTestDatabase('startup-errors');
  });
  after(async () => db?.drop());

  it('a second Plinth on the same data folder: the embedded PostgreSQL folder is in use (exit 2, PLINTH_DATA_DIR)', async () => {
    const dataDir = tmp('second');
    // PostgreSQL runs as its own user when the tests run as root: it must reach its folder.
    chmodSync(dataDir, 0o755);
    const port = await freePort();
    let first: EmbeddedDatabase | undefined;
    try {
      first = await startEmbeddedPostgres({ dataDir, port });
      const o = await start({ PLINTH_DATA_DIR: dataDir, PLINTH_EMBEDDED_PG_PORT: String(port) });
      assert.equal(o.code, 2, o.stderr);
      const line = failureLine(o);
      assert.ok(line.includes(`${path.join(dataDir, 'pgdata')} is in use by another PostgreSQL`), line);
      assert.ok(line.includes('PLINTH_DATA_DIR'), line);
      assert.ok(!line.includes('undefined'), line);
    } finally {
      await first?.stop();
    }
  });

  it('the HTTPS port taken (exit 2, PORT)', async () => {
    const taken = await takenPort();
    try {
      const o = await start({ PLINTH_DATA_DIR: tmp('https'), DATABASE_URL: db.url, PORT: String(taken.port) });
      assert.equal(o.code, 2, o.stderr);
      assert.equal(failureLine(o), `plinth: cannot listen for HTTPS on 127.0.0.1:${taken.port}: the address is already in use (is another Plinth running?); set PORT (and HOST) to change it`);
    } finally {
      await taken.close();
    }
  });

  it('the health port taken (exit 2, PLINTH_HEALTH_PORT)', async () => {
    const taken = await takenPort();
    try {
      const o = await start({ PLINTH_DATA_DIR: tmp('health'), DATABASE_URL: db.url, PLINTH_HEALTH_PORT: String(taken.port) });
      assert.equal(o.code, 2, o.stderr);
      assert.match(failureLine(o), new RegExp(`cannot listen for the plain health listener on 127\\.0\\.0\\.1:${taken.port}: the address is already in use .*set PLINTH_HEALTH_PORT`));
    } finally {
      await taken.close();
    }
  });

  it('a data folder that cannot be written (exit 2, PLINTH_DATA_DIR)', async () => {
    const file = path.join(tmp('file'), 'not-a-folder');
    writeFileSync(file, 'x');
    const o = await start({ PLINTH_DATA_DIR: path.join(file, 'data'), DATABASE_URL: db.url });
    assert.equal(o.code, 2, o.stderr);
    assert.match(failureLine(o), /^plinth: cannot write the data folder .*not-a-folder\/data .*not a directory.*set PLINTH_DATA_DIR/);
  });

  it('PostgreSQL refusing the password: the user and server are named, the password never (exit 2, DATABASE_URL)', async () => {
    const u = new URL(db.url);
    u.password = 'wrong-secret';
    const o = await start({ PLINTH_DATA_DIR: tmp('password'), DATABASE_URL: u.toString() });
    assert.equal(o.code, 2, o.stderr);
    const line = failureLine(o);
    assert.match(line, /^plinth: PostgreSQL at \S+ refused the credentials: password authentication failed for user ".*"; fix the user or password in DATABASE_URL$/);
    assert.ok(line.includes(`${u.username}@`) && line.includes(`/${db.name} refused`), line);
    assert.ok(!o.stderr.includes('wrong-secret'), o.stderr);
  });

  it('Redis unreachable in cluster mode (exit 1, REDIS_URL)', async () => {
    const port = await freePort();
    const o = await start({ PLINTH_DATA_DIR: tmp('redis'), DATABASE_URL: db.url, REDIS_URL: `redis://127.0.0.1:${port}` });
    assert.equal(o.code, 1, o.stderr);
    assert.match(failureLine(o), new RegExp(`^plinth: cannot reach Redis at 127\\.0\\.0\\.1:${port} \\(REDIS_URL\\): .*ECONNREFUSED.*REDIS_URL`));
  });

  it('an authorization configuration with a CEL expression that does not compile, or naming Node (exit 2, PLINTH_AUTHORIZATION_CONFIG)', async () => {
    const dir = tmp('authz');
    const kubeconfig = path.join(dir, 'webhook.kubeconfig');
    writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters: [{name: w, cluster: {server: "https://127.0.0.1:9/authorize"}}]\ncontexts: [{name: w, context: {cluster: w}}]\ncurrent-context: w\n');
    const webhook = { timeout: '3s', authorizedTTL: '5m', unauthorizedTTL: '30s', subjectAccessReviewVersion: 'v1', matchConditionSubjectAccessReviewVersion: 'v1', failurePolicy: 'Deny', connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: kubeconfig } };
    const config = path.join(dir, 'authorization.yaml');
    const authorizers = [{ type: 'RBAC', name: 'rbac' }, { type: 'Webhook', name: 'policy', webhook: { ...webhook, matchConditions: [{ expression: "request.user == 'a'" }, { expression: 'request.user ==' }] } }];
    writeFileSync(config, JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AuthorizationConfiguration', authorizers }));
    const bad = await start({ PLINTH_DATA_DIR: dir, DATABASE_URL: db.url, PLINTH_AUTHORIZATION_CONFIG: config });
    assert.equal(bad.code, 2, bad.stderr);
    const line = failureLine(bad);
    const want = `plinth: PLINTH_AUTHORIZATION_CONFIG ${config}: authorizers[1].webhook.matchConditions[1].expression: Invalid value: "request.user ==": compilation failed: `;
    assert.ok(line.startsWith(want), line);
    writeFileSync(config, JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AuthorizationConfiguration', authorizers: [{ type: 'Node', name: 'node' }, { type: 'RBAC', name: 'rbac' }] }));
    const node = await start({ PLINTH_DATA_DIR: dir, DATABASE_URL: db.url, PLINTH_AUTHORIZATION_CONFIG: config });
    assert.equal(node.code, 2, node.stderr);
    assert.match(failureLine(node), /^plinth: PLINTH_AUTHORIZATION_CONFIG .*: authorizers\[0\]\.type: Invalid value: "Node": Plinth serves no nodes/);
  });

  it('certificates that cannot be read or are not PEM (exit 2, PLINTH_TLS_CERT_FILE)', async () => {
    const dir = tmp('certs');
    const missing = await start({ PLINTH_DATA_DIR: dir, DATABASE_URL: db.url, PLINTH_TLS_CERT_FILE: path.join(dir, 'none.crt'), PLINTH_TLS_KEY_FILE: path.join(dir, 'none.key') });
    assert.equal(missing.code, 2, missing.stderr);
    assert.equal(failureLine(missing), `plinth: cannot read PLINTH_TLS_CERT_FILE (${path.join(dir, 'none.crt')}): no such file or directory`);
    const junk = path.join(dir, 'junk.pem');
    writeFileSync(junk, 'not a certificate\n');
    const invalid = await start({ PLINTH_DATA_DIR: dir, DATABASE_URL: db.url, PLINTH_TLS_CERT_FILE: junk, PLINTH_TLS_KEY_FILE: junk });
    assert.equal(invalid.code, 2, invalid.stderr);
    assert.match(failureLine(invalid), /^plinth: cannot use the serving certificate: PLINTH_TLS_CERT_FILE \(.*junk\.pem\) and PLINTH_TLS_KEY_FILE .* are not a valid PEM certificate and key/);
  });

  it('an invalid anonymous block in PLINTH_AUTHENTICATION_CONFIG, or one beside PLINTH_ANONYMOUS_AUTH: the field is named (exit 2)', async () => {
    const dir = tmp('anonymous');
    const file = path.join(dir, 'authn.yaml');
    writeFileSync(file, 'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous:\n  enabled: false\n  conditions:\n  - path: /healthz\n');
    const invalid = await start({ PLINTH_DATA_DIR: dir, DATABASE_URL: db.url, PLINTH_AUTHENTICATION_CONFIG: file });
    assert.equal(invalid.code, 2, invalid.stderr);
    assert.equal(
      failureLine(invalid),
      `plinth: PLINTH_AUTHENTICATION_CONFIG ${file}: anonymous.conditions: Invalid value: [{"path":"/healthz"}]: enabled should be set to true when conditions are defined`,
    );
    writeFileSync(file, 'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous:\n  enabled: true\n');
    const both = await start({ PLINTH_DATA_DIR: dir, DATABASE_URL: db.url, PLINTH_AUTHENTICATION_CONFIG: file, PLINTH_ANONYMOUS_AUTH: 'true' });
    assert.equal(both.code, 2, both.stderr);
    assert.equal(
      failureLine(both),
      `plinth: PLINTH_AUTHENTICATION_CONFIG ${file}: anonymous: Forbidden: PLINTH_ANONYMOUS_AUTH cannot be set when anonymous field is configured in authentication configuration file`,
    );
  });

  it('an invalid PLINTH_TRACING_CONFIG_FILE: the field is named (exit 2)', async () => {
    const dir = tmp('tracing');
    const file = path.join(dir, 'tracing.yaml');
    writeFileSync(file, 'apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nsamplingRatePerMillion: 2000000\n');
    const invalid = await start({ PLINTH_DATA_DIR: dir, DATABASE_URL: db.url, PLINTH_TRACING_CONFIG_FILE: file });
    assert.equal(invalid.code, 2, invalid.stderr);
    assert.equal(
      failureLine(invalid),
      `plinth: PLINTH_TRACING_CONFIG_FILE ${file}: samplingRatePerMillion: Invalid value: 2000000: sampling rate per million must be less than or equal to one million`,
    );
    const missing = await start({ PLINTH_DATA_DIR: dir, DATABASE_URL: db.url, PLINTH_TRACING_CONFIG_FILE: path.join(dir, 'none.yaml') });
    assert.equal(missing.code, 2, missing.stderr);
    assert.equal(failureLine(missing), `plinth: cannot read PLINTH_TRACING_CONFIG_FILE (${path.join(dir, 'none.yaml')}): no such file or directory`);
  });
});
