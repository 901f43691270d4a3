import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from './app-config.js';
import { advertisedUrl, isUnspecifiedHost } from './advertise-url-config.js';

describe('the advertised URL (Tenants\' status.url)', () => {
  const sans = { dns: ['localhost', 'plinth.example.com', 'node-7'], ip: ['127.0.0.1', '10.0.0.5'] };

  it('is PLINTH_ADVERTISE_URL when set, normalized; a bad one stops start-up naming the variable', () => {
    assert.equal(loadConfig({ PLINTH_ADVERTISE_URL: 'https://api.example.com:6443/' }).advertiseUrl, 'https://api.example.com:6443');
    assert.equal(loadConfig({ PLINTH_ADVERTISE_URL: 'https://[2001:db8::1]' }).advertiseUrl, 'https://[2001:db8::1]');
    assert.equal(loadConfig({}).advertiseUrl, undefined);
    for (const bad of ['api.example.com', 'http://api.example.com', 'https://0.0.0.0:6443', 'https://[::]:6443', 'https://u:p@api.example.com', 'https://api.example.com/plinth', 'https://api.example.com/?x=1']) {
      assert.throws(() => loadConfig({ PLINTH_ADVERTISE_URL: bad }), (e: unknown) => e instanceof ConfigError && /PLINTH_ADVERTISE_URL/.test(e.message), bad);
    }
    assert.equal(advertisedUrl('https://api.example.com', '0.0.0.0', 6443, sans), 'https://api.example.com');
  });

  it('is the listening address when it names one, else the serving certificate\'s first name other than localhost; never 0.0.0.0 or ::', () => {
    assert.equal(advertisedUrl(undefined, '127.0.0.1', 6443, sans), 'https://127.0.0.1:6443');
    assert.equal(advertisedUrl(undefined, '::1', 6443, sans), 'https://[::1]:6443');
    assert.equal(advertisedUrl(undefined, '0.0.0.0', 6443, sans), 'https://plinth.example.com:6443');
    assert.equal(advertisedUrl(undefined, '::', 6443, sans), 'https://plinth.example.com:6443');
    assert.equal(advertisedUrl(undefined, '[::]', 6443, sans), 'https://plinth.example.com:6443');
    assert.equal(advertisedUrl(undefined, '0.0.0.0', 6443, { dns: ['localhost'], ip: ['127.0.0.1', '0.0.0.0', '10.0.0.5'] }), 'https://10.0.0.5:6443');
    assert.equal(advertisedUrl(undefined, '0.0.0.0', 6443, { dns: ['localhost'], ip: ['127.0.0.1', 'fd00::5'] }), 'https://[fd00::5]:6443');
    assert.equal(advertisedUrl(undefined, '0.0.0.0', 6443, { dns: ['localhost'], ip: ['127.0.0.1'] }), 'https://localhost:6443');
    for (const h of ['0.0.0.0', '::', '[::]', '0:0:0:0:0:0:0:0', '::0']) assert.equal(isUnspecifiedHost(h), true, h);
    for (const h of ['127.0.0.1', '::1', 'localhost', '10.0.0.0']) assert.equal(isUnspecifiedHost(h), false, h);
  });
});
