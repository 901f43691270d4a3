import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../apps/api/src/config/app-config.js';

const root = process.cwd();

describe('configuration and packaging', () => {
  it('uses the documented defaults', () => {
    const c = loadConfig({});
    assert.equal(c.port, 6443);
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.dataDir, './.plinth');
    assert.equal(c.databaseUrl, undefined);
  });

  it('rejects bad values with a message naming each variable', () => {
    assert.throws(
      () => loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', REDIS_URL: 'http://r' }),
      (e: unknown) => e instanceof ConfigError && /PORT="eighty"/.test(e.message) && /DATABASE_URL/.test(e.message) && /REDIS_URL/.test(e.message),
    );
    assert.throws(() => loadConfig({ PORT: '70000' }), ConfigError);
  });

  it('stops start-up with exit code 2 and a clear message on a bad value', () => {
    const res = spawnSync(process.execPath, [path.join(root, 'dist/apps/api/src/main.js')], {
      env: { ...process.env, PORT: 'nope' },
      encoding: 'utf8',
      timeout: 20000,
    });
    assert.equal(res.status, 2);
    assert.match(res.stderr, /invalid configuration:\n {2}PORT="nope"/);
  });

  it('has a docker-compose.yml that docker-compose accepts', (t) => {
    const bin = ['/usr/bin/docker-compose', '/usr/local/bin/docker-compose'].find((p) => existsSync(p));
    assert.ok(bin, 'docker-compose is not installed (.ci/run installs it)');
    const out = execFileSync(bin, ['-f', path.join(root, 'docker-compose.yml'), 'config'], { encoding: 'utf8' });
    assert.match(out, /postgres/);
    assert.match(out, /redis/);
    assert.match(out, /DATABASE_URL/);
    t.diagnostic('docker-compose config accepted the file');
  });
});
