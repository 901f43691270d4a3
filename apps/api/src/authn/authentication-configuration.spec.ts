import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AuthenticationConfigError, parseAuthenticationConfiguration, readAuthenticationConfiguration } from './authentication-configuration.js';

const base = (jwt: unknown) => JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1beta1', kind: 'AuthenticationConfiguration', jwt: [jwt] });
const issuer = { url: 'https://issuer.example', audiences: ['plinth'] };

describe('AuthenticationConfiguration', () => {
  it('parses issuers, claim mappings and compiles CEL rules (YAML or JSON)', () => {
    const [j] = parseAuthenticationConfiguration(
      base({
        issuer,
        claimValidationRules: [{ claim: 'hd', requiredValue: 'example.com' }, { expression: 'claims.iat > 0', message: 'm' }],
        claimMappings: { username: { claim: 'sub', prefix: '' }, groups: { expression: 'claims.groups' }, extra: [{ key: 'example.com/x', valueExpression: 'claims.x' }] },
        userValidationRules: [{ expression: "user.username != ''", message: 'empty' }],
      }),
    );
    assert.equal(j.url, 'https://issuer.example');
    assert.deepEqual(j.username, { claim: 'sub', prefix: '' });
    assert.equal(j.groups?.expression?.expression, 'claims.groups');
    assert.equal(j.claimValidationRules.length, 2);
    assert.equal(j.extra[0].key, 'example.com/x');
    const yaml = parseAuthenticationConfiguration(`apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: "https://a.example", audiences: [x]}\n  claimMappings: {username: {expression: claims.sub}}\n`);
    assert.equal(yaml[0].url, 'https://a.example');
  });

  it('refuses bad entries naming the field', () => {
    const bad: [unknown, RegExp][] = [
      [{ issuer: { url: 'http://x', audiences: ['a'] }, claimMappings: { username: { claim: 'sub', prefix: '' } } }, /jwt\[0\]\.issuer\.url: .*must use https scheme/],
      [{ issuer: { url: 'https://x' }, claimMappings: { username: { claim: 'sub', prefix: '' } } }, /jwt\[0\]\.issuer\.audiences: Required value/],
      [{ issuer, claimMappings: { username: { claim: 'sub' } } }, /jwt\[0\]\.claimMappings\.username\.prefix: Required value/],
      [{ issuer, claimMappings: { username: { claim: 'sub', expression: 'claims.sub', prefix: '' } } }, /can't both be set/],
      [{ issuer, claimMappings: {} }, /jwt\[0\]\.claimMappings\.username: Required value/],
      [{ issuer, claimMappings: { username: { expression: 'claims.' } } }, /jwt\[0\]\.claimMappings\.username\.expression: Invalid value: compilation failed/],
      [{ issuer, claimMappings: { username: { claim: 'sub', prefix: '' }, extra: [{ key: 'NoDomain', valueExpression: '"x"' }] } }, /extra\[0\]\.key: Invalid value/],
    ];
    for (const [jwt, re] of bad) assert.throws(() => parseAuthenticationConfiguration(base(jwt)), (e: unknown) => e instanceof AuthenticationConfigError && re.test(e.message));
    assert.throws(() => parseAuthenticationConfiguration('{"kind":"Other"}'), /expected kind AuthenticationConfiguration/);
    const dup = JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AuthenticationConfiguration', jwt: [0, 1].map(() => ({ issuer, claimMappings: { username: { claim: 'sub', prefix: '' } } })) });
    assert.throws(() => parseAuthenticationConfiguration(dup), /jwt\[1\]\.issuer\.url: Duplicate value/);
  });

  it('reads the anonymous block: absent, enabled with exact-path conditions, or disabled', () => {
    const doc = (anonymous: unknown) => JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AuthenticationConfiguration', anonymous });
    assert.equal(readAuthenticationConfiguration(doc(undefined)).anonymous, undefined);
    assert.deepEqual(readAuthenticationConfiguration(doc({ enabled: true, conditions: [{ path: '/livez' }, { path: '/readyz' }] })).anonymous, {
      enabled: true,
      conditions: [{ path: '/livez' }, { path: '/readyz' }],
    });
    assert.deepEqual(readAuthenticationConfiguration(doc({ enabled: false })).anonymous, { enabled: false, conditions: [] });
    assert.deepEqual(readAuthenticationConfiguration(doc({})).anonymous, { enabled: false, conditions: [] });
  });

  it('refuses a bad anonymous block naming the field', () => {
    const doc = (anonymous: unknown) => JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1beta1', kind: 'AuthenticationConfiguration', anonymous });
    const bad: [unknown, RegExp][] = [
      [{ enabled: false, conditions: [{ path: '/healthz' }] }, /^anonymous\.conditions: Invalid value: .*enabled should be set to true when conditions are defined$/],
      [{ conditions: [{ path: '/healthz' }] }, /^anonymous\.conditions: Invalid value: .*enabled should be set to true/],
      [{ enabled: 'yes' }, /^anonymous\.enabled: Invalid value: "yes": must be a boolean$/],
      [{ enabled: true, conditions: [{}] }, /^anonymous\.conditions\[0\]\.path: Required value$/],
      [{ enabled: true, conditions: [{ path: '/a' }, { path: 'healthz' }] }, /^anonymous\.conditions\[1\]\.path: Invalid value: "healthz": must be an absolute path/],
      [{ enabled: true, conditions: [{ paths: ['/a'] }] }, /^strict decoding error: unknown field "anonymous\.conditions\[0\]\.paths"$/],
      [{ enabled: true, allow: true }, /^strict decoding error: unknown field "anonymous\.allow"$/],
      [{ enabled: true, conditions: '/healthz' }, /^anonymous\.conditions: must be a list$/],
      [true, /^anonymous: must be an object$/],
    ];
    for (const [anonymous, re] of bad) assert.throws(() => readAuthenticationConfiguration(doc(anonymous)), (e: unknown) => e instanceof AuthenticationConfigError && re.test(e.message), JSON.stringify(anonymous));
  });
});
