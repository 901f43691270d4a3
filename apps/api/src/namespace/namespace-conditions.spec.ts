import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '@plinth/apimachinery';
import { applyNamespaceDeletionConditions, type ContentDeletionResult } from './namespace-conditions.js';

const clean = (): ContentDeletionResult => ({ contentErrors: [], remainingByResource: new Map(), remainingByFinalizer: new Map() });
const ns = (): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' }, status: { phase: 'Terminating' } });
const conds = (o: KubeObject) => (o.status as { conditions: Array<Record<string, string>> }).conditions;

describe('namespace deletion conditions', () => {
  it('sets the five conditions in upstream order, all False with their ok reasons, when nothing failed', () => {
    const o = ns();
    assert.equal(applyNamespaceDeletionConditions(o, clean(), 't1'), true);
    assert.deepEqual(conds(o).map((c) => [c.type, c.status, c.reason]), [
      ['NamespaceDeletionDiscoveryFailure', 'False', 'ResourcesDiscovered'],
      ['NamespaceDeletionGroupVersionParsingFailure', 'False', 'ParsedGroupVersions'],
      ['NamespaceDeletionContentFailure', 'False', 'ContentDeleted'],
      ['NamespaceContentRemaining', 'False', 'ContentRemoved'],
      ['NamespaceFinalizersRemaining', 'False', 'ContentRemoved'],
    ]);
    assert.equal((o.status as { phase: string }).phase, 'Terminating');
  });

  it('words remaining content and finalizers as upstream, sorted', () => {
    const o = ns();
    const r = clean();
    r.remainingByResource.set('widgets.example.com', 2).set('configmaps.', 1);
    r.remainingByFinalizer.set('b/x', 1).set('a/y', 2);
    r.contentErrors.push('z failed', 'a failed');
    applyNamespaceDeletionConditions(o, r, 't1');
    const byType = Object.fromEntries(conds(o).map((c) => [c.type, c]));
    assert.equal(byType.NamespaceContentRemaining.message, 'Some resources are remaining: configmaps. has 1 resource instances, widgets.example.com has 2 resource instances');
    assert.equal(byType.NamespaceFinalizersRemaining.message, 'Some finalizers are remaining: a/y in 2 resource instances, b/x in 1 resource instances');
    assert.equal(byType.NamespaceFinalizersRemaining.reason, 'SomeFinalizerRemain');
    assert.equal(byType.NamespaceDeletionContentFailure.message, 'Failed to delete all resource types, 2 remaining: a failed, z failed');
    assert.equal(byType.NamespaceDeletionContentFailure.status, 'True');
  });

  it('reports no change for the same result, and moves lastTransitionTime only when the status flips', () => {
    const o = ns();
    const r = clean();
    r.remainingByResource.set('configmaps.', 1);
    applyNamespaceDeletionConditions(o, r, 't1');
    assert.equal(applyNamespaceDeletionConditions(o, r, 't2'), false);
    r.remainingByResource.set('configmaps.', 2);
    assert.equal(applyNamespaceDeletionConditions(o, r, 't3'), true);
    const remaining = () => conds(o).find((c) => c.type === 'NamespaceContentRemaining')!;
    assert.equal(remaining().lastTransitionTime, 't1');
    applyNamespaceDeletionConditions(o, clean(), 't4');
    assert.equal(remaining().lastTransitionTime, 't4');
    assert.equal(remaining().status, 'False');
  });
});
