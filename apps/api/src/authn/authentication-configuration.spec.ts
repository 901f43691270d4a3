import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AuthenticationConfigError, parseAuthenticationConfiguration } from './authentication-configuration.js';

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
});
