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

describe('parseRequestInfo of the platform view', () => {
  it('is tenants/content in the platform scope, named after the addressed tenant, with the inner request', () => {
    const info = parseRequestInfo('GET', '/services/platform/clusters/t1/api/v1/namespaces/ns/secrets/s', false);
    assert.deepEqual(
      { tenant: info.tenant, group: info.group, resource: info.resource, subresource: info.subresource, name: info.name, verb: info.verb, resourceRequest: info.isResourceRequest },
      { tenant: 'default', group: 'tenancy.plinth.dev', resource: 'tenants', subresource: 'content', name: 't1', verb: 'get', resourceRequest: true },
    );
    assert.deepEqual([info.platformView?.inner.tenant, info.platformView?.inner.namespace, info.platformView?.inner.resource, info.platformView?.inner.name], ['t1', 'ns', 'secrets', 's']);
  });

  it('names no tenant for every tenant (*), and is no resource request without /clusters/<tenant>', () => {
    const all = parseRequestInfo('GET', '/services/platform/clusters/*/api/v1/namespaces', true);
    assert.equal(all.name, '');
    assert.equal(all.verb, 'watch');
    assert.equal(all.platformView?.inner.tenant, '*');
    const bare = parseRequestInfo('GET', '/services/platform/api/v1/namespaces', false);
    assert.equal(bare.isResourceRequest, false);
    assert.equal(bare.platformView, undefined);
  });
});
