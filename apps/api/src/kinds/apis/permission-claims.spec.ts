import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bindingClaims, claimAllows, claimSelects, claimsOutcome, exportClaims, sameClaim, validateClaims } from './permission-claims.js';

const withClaims = (permissionClaims: unknown[]) => ({ spec: { permissionClaims } });

describe('permission claims', () => {
  it('defaults verbs to reading and compares claims by resource, verbs and selection', () => {
    const [c] = exportClaims(withClaims([{ resource: 'secrets', all: true }]));
    assert.deepEqual(c, { group: '', resource: 'secrets', verbs: ['get', 'list', 'watch'], all: true, resourceSelector: [] });
    assert.ok(sameClaim(c, exportClaims(withClaims([{ resource: 'secrets', all: true, verbs: ['watch', 'get', 'list'] }]))[0]));
    assert.ok(!sameClaim(c, exportClaims(withClaims([{ resource: 'secrets', all: true, verbs: ['get'] }]))[0]));
    assert.ok(!sameClaim(c, exportClaims(withClaims([{ resource: 'secrets', resourceSelector: [{ namespace: 'a' }] }]))[0]));
    assert.ok(claimAllows(c, 'list') && !claimAllows(c, 'delete'));
    assert.ok(claimAllows(exportClaims(withClaims([{ resource: 'secrets', all: true, verbs: ['*'] }]))[0], 'delete'));
  });

  it('selects objects by name and/or namespace', () => {
    const [c] = exportClaims(withClaims([{ resource: 'configmaps', resourceSelector: [{ namespace: 'a' }, { namespace: 'b', name: 'x' }] }]));
    assert.ok(claimSelects(c, 'a', 'anything'));
    assert.ok(claimSelects(c, 'b', 'x'));
    assert.ok(!claimSelects(c, 'b', 'y'));
    assert.ok(!claimSelects(c, 'c', 'x'));
  });

  it('sorts a binding\'s answers into applied, rejected, open and stale', () => {
    const claims = exportClaims(withClaims([{ resource: 'secrets', all: true }, { resource: 'configmaps', all: true }, { resource: 'services', all: true }]));
    const answers = bindingClaims(withClaims([{ resource: 'secrets', all: true, state: 'Accepted' }, { resource: 'configmaps', all: true, state: 'Rejected' }, { resource: 'pods', all: true, state: 'Accepted' }]));
    const out = claimsOutcome(claims, answers);
    assert.deepEqual([out.applied, out.rejected, out.open, out.stale].map((l) => l.map((c) => c.resource)), [['secrets'], ['configmaps'], ['services'], ['pods']]);
  });

  it('names the offending field of each malformed claim', () => {
    const errs = validateClaims(
      withClaims([
        { resource: '', all: true },
        { resource: 'secrets' },
        { resource: 'pods', all: true, verbs: ['get', 'nope'] },
        { resource: 'pods', all: true },
        { group: 'apis.plinth.dev', resource: 'apibindings', all: true },
        'x',
      ]),
      'spec.permissionClaims',
      true,
    );
    assert.deepEqual(
      errs.map((e) => `${e.field} ${e.type}`),
      [
        'spec.permissionClaims[0].resource FieldValueRequired',
        'spec.permissionClaims[0].state FieldValueRequired',
        'spec.permissionClaims[1] FieldValueRequired',
        'spec.permissionClaims[1].state FieldValueRequired',
        'spec.permissionClaims[2].verbs[1] FieldValueNotSupported',
        'spec.permissionClaims[2].state FieldValueRequired',
        'spec.permissionClaims[3] FieldValueDuplicate',
        'spec.permissionClaims[3].state FieldValueRequired',
        'spec.permissionClaims[4].group FieldValueForbidden',
        'spec.permissionClaims[4].state FieldValueRequired',
        'spec.permissionClaims[5] FieldValueInvalid',
      ],
    );
    assert.deepEqual(validateClaims(withClaims([{ resource: 'secrets', all: true, state: 'Accepted' }]), 'spec.permissionClaims', true), []);
  });
});
