import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from './app-config.js';

describe('configuration', () => {
  it('runs PLINTH_WORKERS server processes, by default one per CPU Node may use (less one beside a local PostgreSQL), and never reads the worker role from the environment', () => {
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://p@db.example/plinth' }).workers, Math.min(64, availableParallelism()));
    assert.equal(loadConfig({ PLINTH_WORKERS: '3' }).workers, 3);
    assert.equal(loadConfig({ PLINTH_WORKERS: '1' }).workers, 1);
    assert.equal(loadConfig({ PLINTH_WORKERS: '3' }).worker, undefined);
    assert.throws(() => loadConfig({ PLINTH_WORKERS: '0' }), (e: unknown) => e instanceof ConfigError && /PLINTH_WORKERS="0"/.test(e.message));
    assert.throws(() => loadConfig({ PLINTH_WORKERS: 'many' }), (e: unknown) => e instanceof ConfigError && /PLINTH_WORKERS/.test(e.message));
  });

  it('stops start-up on a bad PLINTH_FEATURE_GATES or PLINTH_RUNTIME_CONFIG, naming the variable', () => {
    assert.throws(() => loadConfig({ PLINTH_FEATURE_GATES: 'Frobber2D=true' }), (err: Error) => err instanceof ConfigError && /PLINTH_FEATURE_GATES: unrecognized feature gate: Frobber2D/.test(err.message));
    assert.throws(() => loadConfig({ PLINTH_RUNTIME_CONFIG: 'nope/v9=true' }), (err: Error) => err instanceof ConfigError && /PLINTH_RUNTIME_CONFIG: runtime-config: unknown group version nope\/v9/.test(err.message));
    const ok = loadConfig({ PLINTH_FEATURE_GATES: 'MutatingAdmissionPolicy=true', PLINTH_RUNTIME_CONFIG: 'api/alpha=true' });
    assert.equal(ok.featureGates.enabled('MutatingAdmissionPolicy'), true);
    assert.equal(ok.runtimeConfig.serves('admissionregistration.k8s.io/v1alpha1'), true);
  });
});

describe('configuration errors', () => {
  it('REDIS_URL may name Sentinels and a master; a bad one names what is wrong, its passwords redacted', () => {
    assert.equal(loadConfig({ REDIS_URL: 'redis+sentinel://s1:26379,s2:26379,s3:26379/mymaster' }).redisUrl, 'redis+sentinel://s1:26379,s2:26379,s3:26379/mymaster');
    assert.throws(
      () => loadConfig({ REDIS_URL: 'redis+sentinel://:redis-s3cret@s1:26379?sentinel_password=sen-s3cret' }),
      (err: Error) => err instanceof ConfigError && /REDIS_URL: the Sentinel URL names no master/.test(err.message) && !/s3cret/.test(err.message),
    );
  });

  it('echo rejected values with their passwords redacted', () => {
    const env = {
      DATABASE_URL: 'postgres://plinth:db-s3cret @db.example/plinth',
      REDIS_URL: 'http://:redis-s3cret@cache:6379',
      PORT: 'eighty',
    };
    assert.throws(
      () => loadConfig(env),
      (err: Error) => {
        assert.ok(err instanceof ConfigError);
        assert.doesNotMatch(err.message, /s3cret/);
        assert.match(err.message, /DATABASE_URL="postgres:\/\/plinth:xxxxx@db\.example\/plinth": DATABASE_URL must be/);
        assert.match(err.message, /REDIS_URL="http:\/\/:xxxxx@cache:6379": REDIS_URL must be/);
        assert.match(err.message, /PORT="eighty"/);
        return true;
      },
    );
    assert.throws(() => loadConfig({ DATABASE_URL: 'host=db user=plinth password=kv-s3cret' }), (err: Error) => /DATABASE_URL="host=db user=plinth password=xxxxx"/.test(err.message) && !/s3cret/.test(err.message));
    // A parser's own message quoting the value.
    assert.throws(
      () => loadConfig({ PLINTH_WEBHOOK_SERVICE_MAP: 'ns/hook=https://hook:map-s3cret@hooks.example/' }),
      (err: Error) => /PLINTH_WEBHOOK_SERVICE_MAP: "https:\/\/hook:xxxxx@hooks\.example\/": no query, fragment or user information allowed/.test(err.message) && !/s3cret/.test(err.message),
    );
  });
});
