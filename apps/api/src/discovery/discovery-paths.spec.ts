import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withoutDiscoverySlash } from './discovery-paths.js';

describe('withoutDiscoverySlash', () => {
  it('drops the trailing slash of discovery paths in both scopes, keeping the query', () => {
    assert.equal(withoutDiscoverySlash('/api/'), '/api');
    assert.equal(withoutDiscoverySlash('/apis/'), '/apis');
    assert.equal(withoutDiscoverySlash('/version/'), '/version');
    assert.equal(withoutDiscoverySlash('/api/v1/?timeout=32s'), '/api/v1?timeout=32s');
    assert.equal(withoutDiscoverySlash('/apis/apiextensions.k8s.io/'), '/apis/apiextensions.k8s.io');
    assert.equal(withoutDiscoverySlash('/apis/apiextensions.k8s.io/v1/'), '/apis/apiextensions.k8s.io/v1');
    assert.equal(withoutDiscoverySlash('/clusters/acme/apis/g.example.com/v1/'), '/clusters/acme/apis/g.example.com/v1');
  });

  it('leaves resource paths, other paths and empty segments alone', () => {
    for (const url of ['/api', '/api/v1/namespaces/', '/apis/g/v1/widgets/', '/openapi/v2/', '/healthz/', '/', '/clusters/acme/', '/api//', '/apis/g//', '/clusters//api/x/y/z/']) {
      assert.equal(withoutDiscoverySlash(url), url);
    }
  });
});
