import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRequestInfo, requestInfoOf } from './request-info.js';

describe('requestInfoOf', () => {
  it('parses a request once and gives every stage the same answer as parseRequestInfo', () => {
    const req = { method: 'GET', url: '/clusters/t1/api/v1/namespaces/ns/configmaps?watch=true&limit=5' };
    const first = requestInfoOf(req);
    assert.deepEqual(first, parseRequestInfo('GET', '/clusters/t1/api/v1/namespaces/ns/configmaps', true));
    assert.equal(first.verb, 'watch');
    assert.equal(requestInfoOf(req), first, 'the same parse, not another');
  });

  it('parses again when the method, URL or watch flag differ from what it parsed', () => {
    const req = { method: 'GET', url: '/api/v1/namespaces/ns/configmaps' };
    assert.equal(requestInfoOf(req).verb, 'list');
    assert.equal(requestInfoOf(req, true).verb, 'watch', 'the handler read watch from the parsed query');
    req.url = '/api/v1/namespaces/ns/configmaps/a';
    assert.equal(requestInfoOf(req).verb, 'get');
    req.method = 'DELETE';
    assert.equal(requestInfoOf(req).verb, 'delete');
  });
});
