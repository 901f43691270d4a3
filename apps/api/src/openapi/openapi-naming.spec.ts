import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  definitionNameFor,
  groupVersionUrlPrefix,
  isBuiltinGroup,
  openApiV3PathKey,
  operationIdGroupVersion,
  operationTag,
  parseGroupVersion,
  toRestFriendlyName,
  toValidOperationId,
} from './openapi-naming.js';

describe('openapi naming', () => {
  it('reverses the DNS labels of the first segment like ToRESTFriendlyName', () => {
    assert.equal(toRestFriendlyName('k8s.io/api/core/v1.Pod'), 'io.k8s.api.core.v1.Pod');
    assert.equal(toRestFriendlyName('csi.storage.k8s.io/v1alpha1.CSINodeInfo'), 'io.k8s.storage.csi.v1alpha1.CSINodeInfo');
    assert.equal(toRestFriendlyName('stable.example.com/v1/CronTab'), 'com.example.stable.v1.CronTab');
    assert.equal(toRestFriendlyName('foo/v1/Bar'), 'foo.v1.Bar');
  });

  it('names built-in kinds after their Go package', () => {
    assert.equal(definitionNameFor({ group: '', version: 'v1', kind: 'ConfigMap' }), 'io.k8s.api.core.v1.ConfigMap');
    assert.equal(definitionNameFor({ group: 'apps', version: 'v1', kind: 'Deployment' }), 'io.k8s.api.apps.v1.Deployment');
    assert.equal(definitionNameFor({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'Role' }), 'io.k8s.api.rbac.v1.Role');
    assert.equal(
      definitionNameFor({ group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition' }),
      'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition',
    );
  });

  it('names custom kinds after their group, even under k8s.io', () => {
    assert.equal(definitionNameFor({ group: 'stable.example.com', version: 'v1', kind: 'CronTab' }), 'com.example.stable.v1.CronTab');
    assert.equal(definitionNameFor({ group: 'gateway.networking.k8s.io', version: 'v1', kind: 'Gateway' }), 'io.k8s.networking.gateway.v1.Gateway');
    assert.equal(isBuiltinGroup('gateway.networking.k8s.io'), false);
    assert.equal(isBuiltinGroup(''), true);
  });

  it('camel-cases operation ID parts like ToValidOperationID', () => {
    assert.equal(toValidOperationId('stable.example.com', true), 'StableExampleCom');
    assert.equal(toValidOperationId('rbac.authorization', false), 'rbacAuthorization');
    assert.equal(toValidOperationId('v1beta1', true), 'V1beta1');
    assert.equal(toValidOperationId('1abc', false), 'Abc');
  });

  it('builds the group/version part of operation IDs and tags', () => {
    assert.equal(operationIdGroupVersion('', 'v1'), 'CoreV1');
    assert.equal(operationIdGroupVersion('rbac.authorization.k8s.io', 'v1'), 'RbacAuthorizationV1');
    assert.equal(operationIdGroupVersion('stable.example.com', 'v1'), 'StableExampleComV1');
    assert.equal(operationTag('', 'v1'), 'core_v1');
    assert.equal(operationTag('rbac.authorization.k8s.io', 'v1'), 'rbacAuthorization_v1');
  });

  it('maps group/versions to URL prefixes and v3 index keys', () => {
    assert.equal(groupVersionUrlPrefix('', 'v1'), '/api/v1');
    assert.equal(groupVersionUrlPrefix('apps', 'v1'), '/apis/apps/v1');
    assert.deepEqual(parseGroupVersion('v1'), { group: '', version: 'v1' });
    assert.deepEqual(parseGroupVersion('stable.example.com/v1'), { group: 'stable.example.com', version: 'v1' });
    assert.equal(openApiV3PathKey('v1'), 'api/v1');
    assert.equal(openApiV3PathKey('apps/v1'), 'apis/apps/v1');
  });
});
