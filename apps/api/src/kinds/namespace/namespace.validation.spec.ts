import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fieldErrorMessage, type FieldError } from '@plinth/apimachinery';
import type { KubeObject } from '@plinth/apimachinery';
import {
  validateNamespace,
  validateNamespaceFinalizeUpdate,
  validateNamespaceStatusUpdate,
  validateNamespaceUpdate,
} from './namespace.validation.js';

const messages = (errs: FieldError[]): string[] => errs.map(fieldErrorMessage);
const NOT_STANDARD = 'name is neither a standard finalizer name nor is it fully qualified';

function namespace(finalizers: unknown[] = ['kubernetes'], extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'team-a', resourceVersion: '1' },
    spec: { finalizers },
    status: { phase: 'Active' },
    ...extra,
  };
}

describe('validateNamespace', () => {
  it('accepts standard and domain-qualified spec finalizers', () => {
    assert.deepEqual(validateNamespace(namespace(['kubernetes', 'example.com/cleanup'])), []);
    assert.deepEqual(validateNamespace({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } }), []);
  });

  it('rejects a non-standard finalizer without a domain on the unindexed spec path', () => {
    assert.deepEqual(messages(validateNamespace(namespace(['kubernetes', 'custom']))), [
      `spec.finalizers: Invalid value: "custom": ${NOT_STANDARD}`,
    ]);
  });

  it('rejects a finalizer that is not a qualified name', () => {
    const errs = validateNamespace(namespace(['a/b/c']));
    assert.equal(errs.length, 1);
    assert.equal(errs[0].field, 'spec.finalizers');
    assert.match(errs[0].detail ?? '', /^a valid label key must consist of/);
  });

  it('reports both rules for a bad unqualified name', () => {
    assert.deepEqual(messages(validateNamespace(namespace(['-x']))).length, 2);
  });

  it('applies the built-in finalizer rule to metadata.finalizers', () => {
    const ns = namespace();
    ns.metadata.finalizers = ['custom'];
    assert.deepEqual(messages(validateNamespace(ns)), [`metadata.finalizers[0]: Invalid value: "custom": ${NOT_STANDARD}`]);
  });
});

describe('validateNamespaceUpdate', () => {
  it('accepts an unchanged namespace', () => {
    assert.deepEqual(validateNamespaceUpdate(namespace(), namespace()), []);
  });

  it('reports metadata finalizer errors from both the create and the update checks, as upstream does', () => {
    const ns = namespace();
    ns.metadata.finalizers = ['custom'];
    assert.deepEqual(messages(validateNamespaceUpdate(ns, namespace())), [
      `metadata.finalizers[0]: Invalid value: "custom": ${NOT_STANDARD}`,
      `metadata.finalizers[0]: Invalid value: "custom": ${NOT_STANDARD}`,
    ]);
  });

  it('validates spec finalizers of the new object', () => {
    assert.deepEqual(messages(validateNamespaceUpdate(namespace(['custom']), namespace())), [
      `spec.finalizers: Invalid value: "custom": ${NOT_STANDARD}`,
    ]);
  });
});

describe('validateNamespaceStatusUpdate', () => {
  it('accepts Active while not deleting and Terminating while deleting', () => {
    assert.deepEqual(validateNamespaceStatusUpdate(namespace(), namespace()), []);
    const deleting = namespace(['kubernetes'], { status: { phase: 'Terminating' } });
    deleting.metadata.deletionTimestamp = '2024-01-01T00:00:00Z';
    assert.deepEqual(validateNamespaceStatusUpdate(deleting, namespace()), []);
  });

  it('rejects Terminating without a deletionTimestamp', () => {
    const ns = namespace(['kubernetes'], { status: { phase: 'Terminating' } });
    assert.deepEqual(messages(validateNamespaceStatusUpdate(ns, namespace())), [
      'status.Phase: Invalid value: "Terminating": may only be \'Active\' if `deletionTimestamp` is empty',
    ]);
  });

  it('rejects anything but Terminating once deletion started, including a missing phase', () => {
    const ns = namespace(['kubernetes'], { status: {} });
    ns.metadata.deletionTimestamp = '2024-01-01T00:00:00Z';
    assert.deepEqual(messages(validateNamespaceStatusUpdate(ns, namespace())), [
      'status.Phase: Invalid value: "": may only be \'Terminating\' if `deletionTimestamp` is not empty',
    ]);
  });
});

describe('validateNamespaceFinalizeUpdate', () => {
  it('checks spec finalizers on indexed paths', () => {
    assert.deepEqual(messages(validateNamespaceFinalizeUpdate(namespace(['kubernetes', 'custom']), namespace())), [
      `spec.finalizers[1]: Invalid value: "custom": ${NOT_STANDARD}`,
    ]);
  });

  it('accepts an emptied finalizer list', () => {
    assert.deepEqual(validateNamespaceFinalizeUpdate(namespace([]), namespace()), []);
  });
});
