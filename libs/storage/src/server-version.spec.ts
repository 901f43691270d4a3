import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertSupportedPostgres, MIN_POSTGRES_MAJOR, UnsupportedPostgresError } from './server-version.js';

describe('supported PostgreSQL versions', () => {
  it('accepts 15 and later', () => {
    assert.equal(MIN_POSTGRES_MAJOR, 15);
    for (const [v, n] of [['15.0', 150000], ['15.20 (Debian 15.20-0+deb12u1)', 150020], ['17.6', 170006], ['18.1', 180001]] as const) assertSupportedPostgres(v, n);
  });

  it('refuses 14 and older, and a version it cannot read, naming the version', () => {
    for (const [v, n] of [['14.13', 140013], ['13.0', 130000], ['9.6.24', 90624], ['?', Number.NaN]] as const) {
      assert.throws(() => assertSupportedPostgres(v, n), (err: unknown) => err instanceof UnsupportedPostgresError && err.version === v && /needs PostgreSQL 15 or later/.test(err.message));
    }
  });
});
