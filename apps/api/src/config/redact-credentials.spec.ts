import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redactCredentials } from './redact-credentials.js';

describe('redactCredentials', () => {
  it('hides the password of a URL and keeps the user, host and path', () => {
    assert.equal(redactCredentials('postgres://plinth:s3cret@db.example:5432/plinth?sslmode=require'), 'postgres://plinth:xxxxx@db.example:5432/plinth?sslmode=require');
    assert.equal(redactCredentials('rediss://default:hunter2@cache:6380/0'), 'rediss://default:xxxxx@cache:6380/0');
    assert.equal(redactCredentials('redis://:only-a-password@cache'), 'redis://:xxxxx@cache');
    assert.equal(redactCredentials('mysql://root:p@ss:w0rd@h/db'), 'mysql://root:xxxxx@h/db', 'a raw @ in the password: up to the last one of the authority');
    assert.equal(redactCredentials('postgresql://u:my pass@h/db'), 'postgresql://u:xxxxx@h/db', 'a blank in the password (the URL is rejected and echoed)');
  });

  it('hides password= settings in key/value strings and query parameters', () => {
    assert.equal(redactCredentials('host=db user=plinth password=s3cret dbname=plinth'), 'host=db user=plinth password=xxxxx dbname=plinth');
    assert.equal(redactCredentials("host=db password = 'it\\'s a secret' port=5432"), 'host=db password = xxxxx port=5432', 'quoted, with an escaped quote');
    assert.equal(redactCredentials('postgres:///plinth?host=/run&password=s3cret&sslpassword=k3y'), 'postgres:///plinth?host=/run&password=xxxxx&sslpassword=xxxxx');
    assert.equal(redactCredentials('PASSWORD=s3cret'), 'PASSWORD=xxxxx');
  });

  it('leaves text without credentials alone', () => {
    for (const s of ['postgres://plinth@db/plinth', 'redis://cache:6379', 'eighty', 'https://issuer.example/path?x=1']) assert.equal(redactCredentials(s), s);
  });
});
