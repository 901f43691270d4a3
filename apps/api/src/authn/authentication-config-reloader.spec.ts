import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { AuthenticationConfigReloader } from './authentication-config-reloader.js';
import { JwtAuthenticatorSet } from './jwt-authenticator-set.js';

const doc = (body: Record<string, unknown>) => JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AuthenticationConfiguration', ...body });
const issuer = (url: string, username: Record<string, unknown> = { claim: 'sub', prefix: '' }) => ({ issuer: { url, audiences: ['plinth'] }, claimMappings: { username } });

/** A reloader over a real file, logging into `lines` (pino's JSON records). */
function setup(initial: string, initialAnonymous?: { enabled: boolean; conditions: { path: string }[] }) {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'plinth-reloader-')), 'authn.json');
  writeFileSync(file, initial);
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  const jwt = new JwtAuthenticatorSet([]);
  const registry = new Registry();
  const reloader = new AuthenticationConfigReloader({ path: file, initialText: initial, initialAnonymous, jwt, logger, registry, apiServerId: 'test' });
  return { file, lines, jwt, registry, reloader };
}

async function count(registry: Registry, status: string): Promise<number> {
  const m = await registry.getSingleMetric('apiserver_authentication_config_controller_automatic_reloads_total')!.get();
  return m.values.find((v) => v.labels.status === status)?.value ?? 0;
}

describe('authentication configuration reloader', () => {
  it('reloads changed content and ignores unchanged content', async () => {
    const { file, jwt, registry, reloader } = setup(doc({}));
    assert.equal(await reloader.check(), 'unchanged');
    writeFileSync(file, doc({ jwt: [] }));
    assert.equal(await reloader.check(), 'reloaded');
    assert.equal(jwt.issuers.length, 0);
    assert.equal(await reloader.check(), 'unchanged');
    assert.equal(await count(registry, 'success'), 1);
  });

  it('keeps the configuration on invalid content, logs a structured error naming the field, and does not retry the same content', async () => {
    const { file, lines, registry, reloader } = setup(doc({}));
    writeFileSync(file, doc({ jwt: [issuer('https://a.example', { expression: 'claims.' })] }));
    assert.equal(await reloader.check(), 'failed');
    const error = lines.find((l) => l.level === 50);
    assert.ok(error, JSON.stringify(lines));
    assert.equal(error.path, file);
    assert.match(String(error.err), /^jwt\[0\]\.claimMappings\.username\.expression: Invalid value: compilation failed/);
    assert.match(String(error.msg), /^failed to validate authentication config: .*; the authentication configuration in force stays$/);
    assert.equal(await reloader.check(), 'unchanged');
    assert.equal(await count(registry, 'failure'), 1);
  });

  it('refuses a change of the anonymous block, as upstream (fixed at start-up)', async () => {
    const anonymous = { enabled: true, conditions: [{ path: '/healthz' }] };
    const { file, lines, reloader } = setup(doc({ anonymous }), anonymous);
    writeFileSync(file, doc({ anonymous: { enabled: true } }));
    assert.equal(await reloader.check(), 'failed');
    assert.equal(lines.at(-1)?.err, 'anonymous: Forbidden: changed from initial configuration file');
    writeFileSync(file, doc({ jwt: [], anonymous }));
    assert.equal(await reloader.check(), 'reloaded');
  });

  it('retries at the next check when the file cannot be read or a new issuer cannot be reached', async () => {
    const { file, lines, jwt, registry, reloader } = setup(doc({}));
    rmSync(file);
    assert.equal(await reloader.check(), 'failed');
    assert.equal(await reloader.check(), 'failed');
    assert.match(String(lines.at(-1)?.msg), /^failed to read authentication config file: ENOENT/);
    writeFileSync(file, doc({ jwt: [issuer('https://127.0.0.1:1')] }));
    assert.equal(await reloader.check(), 'failed');
    assert.match(String(lines.at(-1)?.msg), /^failed to update authentication config: jwt: discovery of https:\/\/127\.0\.0\.1:1 failed/);
    assert.equal(await reloader.check(), 'failed');
    assert.equal(jwt.issuers.length, 0);
    assert.equal(await count(registry, 'failure'), 4);
    assert.equal(await count(registry, 'success'), 0);
  });
});
