import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UnsupportedPostgresError } from '@plinth/storage';
import { loadConfig } from '../config/app-config.js';
import { describeStartupFailure, embeddedPostgresFailure, EXIT_CONFIGURATION, EXIT_FAILURE } from './startup-failure.js';

const config = loadConfig({ PLINTH_DATA_DIR: '/srv/plinth', PLINTH_EMBEDDED_PG_PORT: '54329' });

describe('start-up failures', () => {
  it('an embedded PostgreSQL whose port is taken names the port and PLINTH_EMBEDDED_PG_PORT, from its own log lines', () => {
    // What PostgreSQL 17 logs when another process holds the port (the package then rejects with nothing).
    const lines = [
      '2026-11-27 14:00:00.000 UTC [123] LOG:  could not bind IPv4 address "127.0.0.1": Address already in use',
      '2026-11-27 14:00:00.000 UTC [123] HINT:  Is another postmaster already running on port 54329? If not, wait a few seconds and retry.',
      '2026-11-27 14:00:00.000 UTC [123] WARNING:  could not create listen socket for "127.0.0.1"',
      '2026-11-27 14:00:00.000 UTC [123] FATAL:  could not create any TCP/IP sockets',
    ];
    const f = embeddedPostgresFailure(lines, undefined, config);
    assert.equal(f.exitCode, EXIT_CONFIGURATION);
    assert.match(f.message, /cannot listen on 127\.0\.0\.1:54329: the port is in use .*PLINTH_EMBEDDED_PG_PORT/);
  });

  it('an embedded PostgreSQL that fails otherwise quotes its FATAL lines, never "undefined"', () => {
    const f = embeddedPostgresFailure(['starting', 'FATAL:  could not load library "x"'], undefined, config);
    assert.equal(f.exitCode, EXIT_FAILURE);
    assert.match(f.message, /^the embedded PostgreSQL in \/srv\/plinth\/pgdata did not start: FATAL: {2}could not load library "x"$/);
  });

  it('a rejection without an error still says something', () => {
    const f = describeStartupFailure(undefined, config);
    assert.equal(f.exitCode, EXIT_FAILURE);
    assert.ok(!/undefined/.test(f.message), f.message);
  });

  it('a DATABASE_URL is described without its password', () => {
    const withDb = loadConfig({ DATABASE_URL: 'postgres://app:s3cret@db.example:5433/plinth' });
    const f = describeStartupFailure(Object.assign(new Error('password authentication failed for user "app"'), { code: '28P01' }), withDb);
    assert.equal(f.exitCode, EXIT_CONFIGURATION);
    assert.equal(f.message, 'PostgreSQL at app@db.example:5433/plinth refused the credentials: password authentication failed for user "app"; fix the user or password in DATABASE_URL');
  });

  it('a PostgreSQL older than 15 is refused in one line naming the server, its version and what to do', () => {
    const withDb = loadConfig({ DATABASE_URL: 'postgres://app:s3cret@db.example:5433/plinth' });
    const f = describeStartupFailure(new UnsupportedPostgresError('14.13 (Debian 14.13-1.pgdg120+1)', 140013), withDb);
    assert.equal(f.exitCode, EXIT_CONFIGURATION);
    assert.equal(
      f.message,
      'PostgreSQL at app@db.example:5433/plinth is 14.13 (Debian 14.13-1.pgdg120+1), too old: Plinth needs PostgreSQL 15 or later; upgrade it, or point DATABASE_URL at a newer one',
    );
  });
});
