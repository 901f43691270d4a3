import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

const MAIN = path.join(process.cwd(), 'dist/apps/api/src/main.js');

/** Runs `npm start`'s entry point with `env` until it exits: its exit code and the one `plinth: ` line it printed. */
function start(env: Record<string, string>): Promise<{ code: number | null; line: string; stderr: string }> {
  const base = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'fatal' };
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN], { env: { ...base, ...env }, timeout: 90_000 }, (err, _stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : null) : 0;
      resolve({ code, stderr: String(stderr), line: String(stderr).split('\n').find((l) => l.startsWith('plinth: ')) ?? '' });
    });
  });
}

const config = (providers: string) => `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
${providers}`;

describe('a bad PLINTH_ENCRYPTION_PROVIDER_CONFIG stops start-up naming the field (exit 2)', () => {
  let db: TestDatabase;
  const dir = mkdtempSync(path.join(tmpdir(), 'plinth-enc-startup-'));
  const run = (name: string, content: string) => {
    const file = path.join(dir, name);
    writeFileSync(file, content);
    return start({ DATABASE_URL: db.url, PLINTH_DATA_DIR: path.join(dir, `data-${name}`), PLINTH_ENCRYPTION_PROVIDER_CONFIG: file, PLINTH_KEY_STORE_URL: keys.url });
  };
  let keys: TestDatabase;

  before(async () => {
    db = await createTestDatabase('encryption-startup');
    keys = await createTestDatabase('encryption-startup-keys');
  });
  after(async () => {
    await db?.drop();
    await keys?.drop();
  });

  it('a kms provider whose socket does not exist: start-up stops naming the provider and the endpoint', async () => {
    const sock = path.join(dir, 'absent.sock');
    const o = await run('kms-absent.yaml', config(`      - kms: {apiVersion: v2, name: vault, endpoint: "unix://${sock}"}\n`));
    assert.equal(o.code, 2, o.stderr);
    assert.ok(o.line.includes('PLINTH_ENCRYPTION_PROVIDER_CONFIG'), o.line);
    assert.ok(o.line.includes(`kms provider vault: endpoint unix://${sock}: no such socket`), o.line);
  });

  it('a kms provider of apiVersion v1 (or none, which defaults to v1) is refused as upstream refuses KMSv1', async () => {
    for (const v of ['apiVersion: v1, ', '']) {
      const o = await run('kms-v1.yaml', config(`      - kms: {${v}name: old, endpoint: "unix:///tmp/kms.sock", cachesize: 100}\n`));
      assert.equal(o.code, 2, o.stderr);
      assert.ok(o.line.includes('error while building transformers: KMSv1 is deprecated and will only receive security updates going forward. Use KMSv2 instead.'), o.line);
    }
  });

  it('kms v2 fields are validated with upstream\'s messages: cachesize, scheme, name, timeout, duplicates', async () => {
    const o = await run(
      'kms-bad.yaml',
      config(
        '      - kms: {apiVersion: v2, name: "a:b", endpoint: "tcp://127.0.0.1:1", cachesize: 10, timeout: 0s}\n' +
          '      - kms: {apiVersion: v2, name: dup, endpoint: "unix:///tmp/a.sock"}\n' +
          '      - kms: {apiVersion: v2, name: dup, endpoint: "unix:///tmp/b.sock"}\n',
      ),
    );
    assert.equal(o.code, 2, o.stderr);
    for (const part of [
      `resources[0].providers[0].kms.name: Invalid value: "a:b": invalid KMS provider name a:b, must not contain ':'`,
      'resources[0].providers[0].kms.timeout: Invalid value: 0s: timeout should be a positive value',
      'resources[0].providers[0].kms.endpoint: Invalid value: "tcp://127.0.0.1:1": unsupported scheme "tcp" for KMS provider, only unix is supported',
      'resources[0].providers[0].kms.cachesize: Invalid value: 10: cachesize is not supported in v2',
      'resources[0].providers[2].kms.name: Invalid value: "dup": duplicate KMS provider name dup, names must be unique',
    ]) {
      assert.ok(o.line.includes(part), `${part}\n${o.line}`);
    }
  });

  it('a short aescbc key: upstream\'s validation message, the key not shown', async () => {
    const short = Buffer.from('0123456789').toString('base64');
    const o = await run('short.yaml', config(`      - aescbc: {keys: [{name: k1, secret: ${short}}]}\n`));
    assert.equal(o.code, 2, o.stderr);
    assert.ok(o.line.includes('resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 10, expected one of [16 24 32]'), o.line);
    assert.equal(o.stderr.includes(short), false);
  });

  it('a file that does not exist names the setting', async () => {
    const o = await start({ DATABASE_URL: db.url, PLINTH_DATA_DIR: path.join(dir, 'data-missing'), PLINTH_ENCRYPTION_PROVIDER_CONFIG: path.join(dir, 'missing.yaml') });
    assert.equal(o.code, 2, o.stderr);
    assert.ok(o.line.includes('PLINTH_ENCRYPTION_PROVIDER_CONFIG'), o.line);
    assert.ok(o.line.includes('error reading encryption provider configuration file'), o.line);
  });
});
