import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../config/app-config.js';

describe('PLINTH_REQUEST_TIMEOUT_SECONDS', () => {
  it('defaults to upstream\'s 60 s, takes fractions, and stops start-up on a value out of range, naming the variable', () => {
    assert.equal(loadConfig({}).requestTimeoutSeconds, 60);
    assert.equal(loadConfig({ PLINTH_REQUEST_TIMEOUT_SECONDS: '2.5' }).requestTimeoutSeconds, 2.5);
    for (const bad of ['0', '-1', 'soon', '7200']) {
      assert.throws(() => loadConfig({ PLINTH_REQUEST_TIMEOUT_SECONDS: bad }), (err: Error) => err instanceof ConfigError && /PLINTH_REQUEST_TIMEOUT_SECONDS/.test(err.message));
    }
  });
});
