import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRedisUrl } from './redis-url.js';

describe('parseRedisUrl', () => {
  it('takes a server URL as before: host, port, credentials, database, TLS', () => {
    const t = parseRedisUrl('rediss://app:p%40ss@cache.example:6380/3');
    assert.equal(t.kind, 'direct');
    assert.equal(t.display, 'cache.example:6380/3');
    assert.deepEqual(
      { host: t.options.host, port: t.options.port, username: t.options.username, password: t.options.password, db: t.options.db, tls: t.options.tls },
      { host: 'cache.example', port: 6380, username: 'app', password: 'p@ss', db: 3, tls: {} },
    );
    assert.equal(parseRedisUrl('redis://127.0.0.1').options.port, 6379);
  });

  it('takes Sentinels and a master name (redis+sentinel://), Sentinels on 26379 unless told, the data nodes\' and the Sentinels\' credentials apart', () => {
    const t = parseRedisUrl('redis+sentinel://:data-pw@s1,s2.example:26380,[::1]:26381/my%20master/2?sentinel_username=sen&sentinel_password=sen-pw');
    assert.equal(t.kind, 'sentinel');
    assert.equal(t.masterName, 'my master');
    assert.deepEqual(t.sentinels, [
      { host: 's1', port: 26379 },
      { host: 's2.example', port: 26380 },
      { host: '::1', port: 26381 },
    ]);
    assert.equal(t.display, 'master "my master" via Sentinels s1:26379,s2.example:26380,[::1]:26381/2');
    assert.doesNotMatch(t.display, /pw/);
    const o = t.options;
    assert.deepEqual(
      [o.name, o.password, o.username, o.sentinelUsername, o.sentinelPassword, o.db, o.tls, o.enableTLSForSentinelMode],
      ['my master', 'data-pw', undefined, 'sen', 'sen-pw', 2, undefined, false],
    );
    const tls = parseRedisUrl('rediss+sentinel://h/m').options;
    assert.deepEqual([tls.tls, tls.sentinelTLS, tls.enableTLSForSentinelMode, tls.db], [{}, {}, true, 0]);
  });

  it('rejects what it cannot use, saying what and never the password', () => {
    const bad: [string, RegExp][] = [
      ['http://cache', /expected redis:\/\/, rediss:\/\/, redis\+sentinel:\/\/ or rediss\+sentinel:\/\//],
      ['redis+sentinel:///mymaster', /names no Sentinel/],
      ['redis+sentinel://:s3cret@s1:26379', /names no master/],
      ['redis+sentinel://:s3cret@s1:26379/', /names no master/],
      ['redis+sentinel://s1:26379/m/1/2', /path must be \/<master name>\[\/db\]/],
      ['redis+sentinel://s1:26379/m/one', /invalid Redis database "one"/],
      ['redis+sentinel://s1:0/m', /invalid port 0/],
      ['redis+sentinel://s1:26379,/m', /invalid Sentinel ""/],
      ['redis+sentinel://s1:26379/m?sentinelPassword=x', /unknown Sentinel URL option "sentinelPassword"/],
      ['redis://:s3cret@cache/zero', /invalid Redis database "zero"/],
    ];
    for (const [url, why] of bad) {
      assert.throws(() => parseRedisUrl(url), (err: Error) => why.test(err.message) && !/s3cret/.test(err.message), url);
    }
  });
});
