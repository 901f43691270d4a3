import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDatabaseError, isDatabaseUnavailable } from './database-errors.js';

describe('isDatabaseUnavailable', () => {
  it('recognises a lost or refused connection, by SQLSTATE, errno or pg message', () => {
    for (const err of [
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      Object.assign(new Error('the database system is starting up'), { code: '57P03' }),
      Object.assign(new Error('connection failure'), { code: '08006' }),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
      new Error('wrapped', { cause: Object.assign(new Error('x'), { code: '57P02' }) }),
    ]) {
      assert.equal(isDatabaseUnavailable(err), true, err.message);
    }
  });

  it('leaves bugs and bad input alone', () => {
    for (const err of [
      Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' }),
      Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' }),
      new TypeError('cannot read properties of undefined'),
      'a string',
      undefined,
    ]) {
      assert.equal(isDatabaseUnavailable(err), false, String(err));
    }
  });
});

describe('isDatabaseError', () => {
  it('recognises what PostgreSQL reported, so its text stays out of responses', () => {
    assert.equal(isDatabaseError(Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021', severity: 'ERROR' })), true);
    assert.equal(isDatabaseError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })), false);
    assert.equal(isDatabaseError(new Error('x')), false);
  });
});
