import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from './app-config.js';

describe('configuration', () => {
  it('stops start-up on a bad PLINTH_FEATURE_GATES or PLINTH_RUNTIME_CONFIG, naming the variable', () => {
    assert.throws(() => loadConfig({ PLINTH_FEATURE_GATES: 'Frobber2D=true' }), (err: Error) => err instanceof ConfigError && /PLINTH_FEATURE_GATES: unrecognized feature gate: Frobber2D/.test(err.message));
    assert.throws(() => loadConfig({ PLINTH_RUNTIME_CONFIG: 'nope/v9=true' }), (err: Error) => err instanceof ConfigError && /PLINTH_RUNTIME_CONFIG: runtime-config: unknown group version nope\/v9/.test(err.message));
    const ok = loadConfig({ PLINTH_FEATURE_GATES: 'MutatingAdmissionPolicy=true', PLINTH_RUNTIME_CONFIG: 'api/alpha=true' });
    assert.equal(ok.featureGates.enabled('MutatingAdmissionPolicy'), true);
    assert.equal(ok.runtimeConfig.serves('admissionregistration.k8s.io/v1alpha1'), true);
  });
});
