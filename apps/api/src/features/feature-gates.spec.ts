import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { FeatureGateError, FeatureGates, KNOWN_FEATURES, parseFeatureDefinitions } from './feature-gates.js';
import { GATED_API_VERSIONS, RuntimeConfig, RuntimeConfigError } from './runtime-config.js';

describe('FeatureGates', () => {
  it('starts from the defaults and takes upstream\'s --feature-gates syntax', () => {
    assert.equal(new FeatureGates().enabled('MutatingAdmissionPolicy'), false);
    const g = new FeatureGates('MutatingAdmissionPolicy=true, CoordinatedLeaderElection=false');
    assert.equal(g.enabled('MutatingAdmissionPolicy'), true);
    assert.equal(g.enabled('CoordinatedLeaderElection'), false);
    assert.equal(new FeatureGates('ServerSideApply=true').enabled('ServerSideApply'), true, 'a locked gate may be set to its default');
  });

  it("has kube-apiserver 1.35's stage, default and lock for every upstream gate it knows", () => {
    const stages = Object.fromEntries(new FeatureGates().all().map((f) => [f.name, [f.stage, f.default, f.lockToDefault ?? false]]));
    assert.deepEqual(stages, {
      AllowParsingUserUIDFromCertAuth: ['BETA', true, false],
      AllowUnsafeMalformedObjectDeletion: ['ALPHA', false, false],
      CBORServingAndStorage: ['ALPHA', false, false],
      MutatingAdmissionPolicy: ['BETA', false, false],
      CoordinatedLeaderElection: ['BETA', false, false],
      StorageVersionMigrator: ['BETA', false, false],
      StructuredAuthenticationConfiguration: ['GA', true, true],
      ServerSideApply: ['GA', true, true],
      ValidatingAdmissionPolicy: ['GA', true, true],
    });
    // GA in 1.34: locked on, as upstream answers --feature-gates=StructuredAuthenticationConfiguration=false.
    assert.throws(() => new FeatureGates('StructuredAuthenticationConfiguration=false'), new FeatureGateError('cannot set feature gate StructuredAuthenticationConfiguration to false, feature is locked to true'));
  });

  it('refuses unknown gates, locked gates and bad values with upstream\'s messages', () => {
    assert.throws(() => new FeatureGates('Frobber2D=true'), new FeatureGateError('unrecognized feature gate: Frobber2D'));
    assert.throws(() => new FeatureGates('ServerSideApply=false'), new FeatureGateError('cannot set feature gate ServerSideApply to false, feature is locked to true'));
    assert.throws(() => new FeatureGates('MutatingAdmissionPolicy=yes'), /invalid value of MutatingAdmissionPolicy=yes/);
    assert.throws(() => new FeatureGates('MutatingAdmissionPolicy'), /missing bool value for MutatingAdmissionPolicy/);
  });

  it('takes gates the operator defines for CRDs, with defaults and locks by stage', () => {
    const defined = parseFeatureDefinitions('Frobber2D=Alpha, Wide=beta,Done=GA');
    assert.deepEqual(defined, [
      { name: 'Frobber2D', stage: 'ALPHA', default: false, lockToDefault: false },
      { name: 'Wide', stage: 'BETA', default: true, lockToDefault: false },
      { name: 'Done', stage: 'GA', default: true, lockToDefault: true },
    ]);
    const g = new FeatureGates('Frobber2D=true', [...KNOWN_FEATURES, ...defined]);
    assert.equal(g.enabled('Frobber2D'), true);
    assert.equal(g.stage('Wide'), 'BETA');
    assert.equal(g.stage('Nope'), undefined);
    assert.throws(() => new FeatureGates('Done=false', [...KNOWN_FEATURES, ...defined]), /feature is locked to true/);
    assert.throws(() => parseFeatureDefinitions('Frobber2D'), /needs a stage/);
    assert.throws(() => parseFeatureDefinitions('frobber=Alpha'), /must be UpperCamelCase/);
    assert.throws(() => parseFeatureDefinitions('ServerSideApply=Beta'), /already defined/);
  });

  it('reports kubernetes_feature_enabled{name,stage}', async () => {
    const registry = new Registry();
    new FeatureGates('MutatingAdmissionPolicy=true').register(registry);
    const text = await registry.metrics();
    assert.match(text, /kubernetes_feature_enabled\{name="MutatingAdmissionPolicy",stage="BETA"\} 1/);
    assert.match(text, /kubernetes_feature_enabled\{name="ServerSideApply",stage=""\} 1/);
    assert.match(text, /kubernetes_feature_enabled\{name="CoordinatedLeaderElection",stage="BETA"\} 0/);
  });
});

describe('RuntimeConfig', () => {
  it('serves alpha versions only when enabled, by name or by api/alpha and api/all; later settings win', () => {
    const v = 'admissionregistration.k8s.io/v1alpha1';
    assert.equal(new RuntimeConfig('', GATED_API_VERSIONS).serves(v), false);
    assert.equal(new RuntimeConfig(`${v}=true`, GATED_API_VERSIONS).serves(v), true);
    assert.equal(new RuntimeConfig(v, GATED_API_VERSIONS).serves(v), true, 'a bare group/version means true');
    assert.equal(new RuntimeConfig('api/alpha=true', GATED_API_VERSIONS).serves(v), true);
    assert.equal(new RuntimeConfig(`api/all=true,${v}=false`, GATED_API_VERSIONS).serves(v), false);
    assert.equal(new RuntimeConfig('', GATED_API_VERSIONS).serves('admissionregistration.k8s.io/v1'), true, 'versions not gated are always served');
  });

  it('serves the beta versions new since 1.24 only when enabled, by name or by api/beta, as upstream (KEP-3136)', () => {
    for (const v of ['admissionregistration.k8s.io/v1beta1', 'coordination.k8s.io/v1beta1', 'storagemigration.k8s.io/v1beta1']) {
      assert.equal(new RuntimeConfig('', GATED_API_VERSIONS).serves(v), false, v);
      assert.equal(new RuntimeConfig(`${v}=true`, GATED_API_VERSIONS).serves(v), true, v);
      assert.equal(new RuntimeConfig('api/beta=true', GATED_API_VERSIONS).serves(v), true, v);
      assert.equal(new RuntimeConfig('api/alpha=true', GATED_API_VERSIONS).serves(v), false, v);
    }
    assert.equal(new RuntimeConfig('', GATED_API_VERSIONS).serves('tenancy.plinth.dev/v1beta1'), true, 'older betas stay on by default');
  });

  it('refuses unknown group versions and bad values', () => {
    assert.throws(() => new RuntimeConfig('frobs.example.com/v1=true', GATED_API_VERSIONS), RuntimeConfigError);
    assert.throws(() => new RuntimeConfig('api/legacy=true', GATED_API_VERSIONS), /unknown api group version api\/legacy/);
    assert.throws(() => new RuntimeConfig('admissionregistration.k8s.io/v1alpha1=maybe', GATED_API_VERSIONS), /must be true or false/);
  });
});
