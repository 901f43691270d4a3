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
    return start({ DATABASE_URL: db.url, PLINTH_DATA_DIR: path.join(dir, `data-${name}`), PLINTH_ENCRYPTION_PROVIDER_CONFIG: file });
  };

  before(async () => {
    db = await createTestDatabase('encryption-startup');
  });
  after(async () => db?.drop());

  it('a kms provider: KMS v2 is not supported yet', async () => {
    const o = await run('kms.yaml', config('      - kms: {apiVersion: v2, name: vault, endpoint: "unix:///tmp/kms.sock"}\n'));
    assert.equal(o.code, 2, o.stderr);
    assert.ok(o.line.includes('PLINTH_ENCRYPTION_PROVIDER_CONFIG'), o.line);
    assert.ok(o.line.includes('resources[0].providers[0].kms: Forbidden: KMS v2 is not supported by Plinth yet'), o.line);
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
