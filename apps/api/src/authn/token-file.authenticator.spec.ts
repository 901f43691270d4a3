import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCsvLine, parseTokenFile, TokenFileAuthenticator } from './token-file.authenticator.js';

describe('static token file (--token-auth-file format)', () => {
  it('parses token,user,uid and quoted comma-separated groups; skips blank lines; a later duplicate wins', () => {
    const tokens = parseTokenFile('t1,alice,u1,"a,b"\n\n t2, bob ,u2\nt1,carol,u3\n');
    assert.deepEqual(tokens.get('t1'), { username: 'carol', uid: 'u3', groups: [] });
    assert.deepEqual(tokens.get('t2'), { username: 'bob ', uid: 'u2', groups: [] });
    assert.deepEqual(parseTokenFile('t,u,i,"g1, g2"').get('t')?.groups, ['g1', 'g2']);
  });

  it('refuses short records, empty tokens and broken quotes, naming the line', () => {
    assert.throws(() => parseTokenFile('ok,u,i\nonly,two\n', 'f.csv'), /f\.csv line 2: must have at least 3 columns \(token, user name, user uid\), found 2/);
    assert.throws(() => parseTokenFile(',u,i'), /line 1: empty token/);
    assert.throws(() => parseTokenFile('t,u,i,"open'), /line 1: extraneous or missing " in quoted-field/);
    assert.throws(() => parseCsvLine('a"b,c'), /bare "/);
  });

  it('unescapes doubled quotes', () => {
    assert.deepEqual(parseCsvLine('"a ""q"" b",c'), ['a "q" b', 'c']);
  });

  it('answers null for unknown tokens and a copy of the user for known ones', () => {
    const a = new TokenFileAuthenticator(parseTokenFile('t,u,i,g'));
    assert.equal(a.authenticateToken('nope'), null);
    const r = a.authenticateToken('t')!;
    r.user.groups.push('x');
    assert.deepEqual(a.authenticateToken('t')!.user.groups, ['g']);
  });
});
