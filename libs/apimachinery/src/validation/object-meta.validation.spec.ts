import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fieldErrorMessage, type FieldError } from '../errors/field-error.js';
import type { ObjectMeta } from '../object/kube-object.js';
import {
  validateKubeFinalizerName,
  validateKubeFinalizers,
  validateObjectMeta,
  validateObjectMetaUpdate,
  type ObjectMetaOptions,
} from './object-meta.validation.js';

const NAMESPACED: ObjectMetaOptions = { namespaced: true, nameValidation: 'subdomain' };
const CLUSTER_LABEL: ObjectMetaOptions = { namespaced: false, nameValidation: 'label' };

const messages = (errs: FieldError[]): string[] => errs.map(fieldErrorMessage);

function meta(extra: Partial<ObjectMeta> = {}): ObjectMeta {
  return { name: 'demo', namespace: 'default', ...extra };
}

describe('validateObjectMeta: name', () => {
  it('accepts a well-formed namespaced object', () => {
    assert.deepEqual(validateObjectMeta(meta({ labels: { app: 'web' }, annotations: { note: 'x' } }), NAMESPACED), []);
  });

  it('requires a name when no generateName is given', () => {
    assert.deepEqual(messages(validateObjectMeta(meta({ name: undefined }), NAMESPACED)), [
      'metadata.name: Required value: name or generateName is required',
    ]);
  });

  it('accepts generateName alone unless requireName is set', () => {
    assert.deepEqual(validateObjectMeta(meta({ name: undefined, generateName: 'demo-' }), NAMESPACED), []);
    assert.deepEqual(
      messages(validateObjectMeta(meta({ name: undefined, generateName: 'demo-' }), { ...NAMESPACED, requireName: true })),
      ['metadata.name: Required value: name or generateName is required'],
    );
  });

  it('rejects a malformed name with the exact upstream message', () => {
    assert.deepEqual(messages(validateObjectMeta(meta({ name: 'Bad_Name' }), NAMESPACED)), [
      `metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    ]);
  });

  it('limits subdomain names to 253 and label names to 63 characters', () => {
    assert.deepEqual(messages(validateObjectMeta(meta({ name: 'a'.repeat(254) }), NAMESPACED)), [
      `metadata.name: Invalid value: "${'a'.repeat(254)}": must be no more than 253 characters`,
    ]);
    assert.deepEqual(messages(validateObjectMeta({ name: 'a'.repeat(64) }, CLUSTER_LABEL)), [
      `metadata.name: Invalid value: "${'a'.repeat(64)}": must be no more than 63 characters`,
    ]);
  });

  it('rejects dots in label-named kinds', () => {
    assert.deepEqual(messages(validateObjectMeta({ name: 'a.b' }, CLUSTER_LABEL)), [
      'metadata.name: Invalid value: "a.b": must not contain dots',
    ]);
  });

  it('applies path-segment rules', () => {
    assert.deepEqual(
      messages(validateObjectMeta({ name: 'a/b' }, { namespaced: false, nameValidation: 'path-segment' })),
      [`metadata.name: Invalid value: "a/b": may not contain '/'`],
    );
  });

  it('validates the generateName prefix with a trailing dash tolerated', () => {
    assert.deepEqual(validateObjectMeta(meta({ generateName: 'web-' }), NAMESPACED), []);
    const errs = validateObjectMeta(meta({ generateName: 'Web-' }), NAMESPACED);
    assert.equal(errs.length, 1);
    assert.equal(errs[0].field, 'metadata.generateName');
    assert.equal(errs[0].value, 'Web-');
  });
});

describe('validateObjectMeta: namespace and generation', () => {
  it('requires a namespace for namespaced kinds', () => {
    assert.deepEqual(messages(validateObjectMeta(meta({ namespace: undefined }), NAMESPACED)), [
      'metadata.namespace: Required value',
    ]);
  });

  it('checks the namespace is a DNS label', () => {
    assert.deepEqual(messages(validateObjectMeta(meta({ namespace: 'a.b' }), NAMESPACED)), [
      'metadata.namespace: Invalid value: "a.b": must not contain dots',
    ]);
  });

  it('forbids a namespace on cluster-scoped kinds', () => {
    assert.deepEqual(messages(validateObjectMeta({ name: 'n', namespace: 'default' }, CLUSTER_LABEL)), [
      'metadata.namespace: Forbidden: not allowed on this type',
    ]);
  });

  it('rejects a negative generation', () => {
    assert.deepEqual(messages(validateObjectMeta(meta({ generation: -1 }), NAMESPACED)), [
      'metadata.generation: Invalid value: -1: must be greater than or equal to 0',
    ]);
  });
});

describe('validateObjectMeta: labels and annotations', () => {
  it('rejects a label value longer than 63 bytes on metadata.labels', () => {
    const value = 'v'.repeat(64);
    assert.deepEqual(messages(validateObjectMeta(meta({ labels: { app: value } }), NAMESPACED)), [
      `metadata.labels: Invalid value: "${value}": must be no more than 63 bytes`,
    ]);
  });

  it('rejects a bad label key, reporting the key as the value', () => {
    const errs = validateObjectMeta(meta({ labels: { 'a/b/c': 'x' } }), NAMESPACED);
    assert.equal(errs.length, 1);
    assert.equal(errs[0].field, 'metadata.labels');
    assert.equal(errs[0].value, 'a/b/c');
  });

  it('checks annotation keys case-insensitively', () => {
    assert.deepEqual(validateObjectMeta(meta({ annotations: { 'Example.COM/Key': 'v' } }), NAMESPACED), []);
    const errs = validateObjectMeta(meta({ annotations: { 'bad key': 'v' } }), NAMESPACED);
    assert.equal(errs.length, 1);
    assert.equal(errs[0].field, 'metadata.annotations');
    assert.equal(errs[0].value, 'bad key');
  });

  it('caps keys plus values of annotations at 262144 bytes', () => {
    assert.deepEqual(validateObjectMeta(meta({ annotations: { a: 'x'.repeat(262143) } }), NAMESPACED), []);
    assert.deepEqual(messages(validateObjectMeta(meta({ annotations: { a: 'x'.repeat(262144) } }), NAMESPACED)), [
      'metadata.annotations: Too long: may not be more than 262144 bytes',
    ]);
  });
});

describe('validateObjectMeta: finalizers', () => {
  it('accepts unqualified custom finalizers (the generic rule is only "qualified name")', () => {
    assert.deepEqual(validateObjectMeta(meta({ finalizers: ['custom', 'example.com/x'] }), NAMESPACED), []);
  });

  it('rejects a finalizer that is not a qualified name, on the unindexed path', () => {
    const errs = validateObjectMeta(meta({ finalizers: ['ok.io/a', 'a/b/c'] }), NAMESPACED);
    assert.equal(errs.length, 1);
    assert.equal(errs[0].field, 'metadata.finalizers');
    assert.equal(errs[0].value, 'a/b/c');
  });

  it('rejects orphan together with foregroundDeletion', () => {
    assert.deepEqual(messages(validateObjectMeta(meta({ finalizers: ['orphan', 'foregroundDeletion'] }), NAMESPACED)), [
      'metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set',
    ]);
  });
});

describe('validateKubeFinalizerName', () => {
  it('accepts standard and domain-qualified names', () => {
    for (const f of ['kubernetes', 'orphan', 'foregroundDeletion', 'example.com/cleanup']) {
      assert.deepEqual(validateKubeFinalizerName(f, 'x'), []);
    }
  });

  it('rejects other names without a slash, indexed under metadata.finalizers', () => {
    assert.deepEqual(messages(validateKubeFinalizers(meta({ finalizers: ['kubernetes', 'custom'] }))), [
      'metadata.finalizers[1]: Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified',
    ]);
  });
});

describe('validateObjectMeta: ownerReferences', () => {
  const ref = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u1' };

  it('accepts a complete reference', () => {
    assert.deepEqual(validateObjectMeta(meta({ ownerReferences: [ref] }), NAMESPACED), []);
  });

  it('requires apiVersion, kind, name and uid on indexed paths', () => {
    const bad = { apiVersion: '', kind: '', name: '', uid: '' };
    assert.deepEqual(messages(validateObjectMeta(meta({ ownerReferences: [ref, bad] }), NAMESPACED)), [
      'metadata.ownerReferences[1].apiVersion: Required value: must not be empty',
      'metadata.ownerReferences[1].kind: Required value: must not be empty',
      'metadata.ownerReferences[1].name: Required value: must not be empty',
      'metadata.ownerReferences[1].uid: Required value: must not be empty',
    ]);
  });

  it('rejects an apiVersion without a version', () => {
    for (const apiVersion of ['apps/', 'a/b/c', '/']) {
      assert.deepEqual(messages(validateObjectMeta(meta({ ownerReferences: [{ ...ref, apiVersion }] }), NAMESPACED)), [
        `metadata.ownerReferences[0].apiVersion: Invalid value: "${apiVersion}": must be <group>/<version> or <version>`,
      ]);
    }
  });

  it('allows at most one controller reference', () => {
    const refs = [
      { ...ref, controller: true },
      { ...ref, kind: 'Deployment', name: 'd', uid: 'u2', controller: true },
    ];
    const errs = validateObjectMeta(meta({ ownerReferences: refs }), NAMESPACED);
    assert.equal(errs.length, 1);
    assert.equal(errs[0].field, 'metadata.ownerReferences');
    assert.equal(
      errs[0].detail,
      'Only one reference can have Controller set to true. Found "true" in references for ReplicaSet/rs and Deployment/d',
    );
  });

  it('bans core/v1 Event as an owner', () => {
    const errs = validateObjectMeta(meta({ ownerReferences: [{ ...ref, apiVersion: 'v1', kind: 'Event' }] }), NAMESPACED);
    assert.equal(errs.length, 1);
    assert.equal(errs[0].field, 'metadata.ownerReferences[0]');
    assert.equal(errs[0].detail, '/v1, Kind=Event is disallowed from being an owner');
  });
});

describe('validateObjectMeta: managedFields', () => {
  it('accepts Apply and Update entries', () => {
    const managedFields = [{ manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1' }];
    assert.deepEqual(validateObjectMeta(meta({ managedFields }), NAMESPACED), []);
  });

  it('rejects a missing or unknown operation and a foreign fieldsType', () => {
    const managedFields = [{ manager: 'm' }, { manager: 'm', operation: 'Patch', fieldsType: 'FieldsV2' }];
    assert.deepEqual(messages(validateObjectMeta(meta({ managedFields }), NAMESPACED)), [
      'metadata.managedFields[0].operation: Required value: must not be empty',
      'metadata.managedFields[1].operation: Unsupported value: "Patch": supported values: "Apply", "Update"',
      'metadata.managedFields[1].fieldsType: Invalid value: "FieldsV2": must be `FieldsV1`',
    ]);
  });

  it('rejects non-printable characters and over-long managers', () => {
    const managedFields = [{ manager: 'a\u0007', operation: 'Update' }, { manager: 'm'.repeat(129), operation: 'Update' }];
    assert.deepEqual(messages(validateObjectMeta(meta({ managedFields }), NAMESPACED)), [
      'metadata.managedFields[0].manager: Invalid value: "a\\u0007": invalid character U+0007 (at position 1)',
      'metadata.managedFields[1].manager: Too long: may not be more than 128 bytes',
    ]);
  });
});

describe('validateObjectMetaUpdate', () => {
  const old = meta({ uid: 'u1', resourceVersion: '5', creationTimestamp: '2024-01-01T00:00:00Z', generation: 2 });

  it('accepts an update that changes only mutable fields', () => {
    assert.deepEqual(validateObjectMetaUpdate({ ...old, labels: { a: 'b' }, generation: 3 }, old), []);
  });

  it('reports a changed name as immutable with the exact message', () => {
    assert.deepEqual(messages(validateObjectMetaUpdate({ ...old, name: 'other' }, old)), [
      'metadata.name: Invalid value: "other": field is immutable',
    ]);
  });

  it('keeps namespace and uid immutable', () => {
    assert.deepEqual(messages(validateObjectMetaUpdate({ ...old, namespace: 'x', uid: 'u2' }, old)), [
      'metadata.namespace: Invalid value: "x": field is immutable',
      'metadata.uid: Invalid value: "u2": field is immutable',
    ]);
  });

  it('compares creationTimestamp as an instant', () => {
    assert.deepEqual(validateObjectMetaUpdate({ ...old, creationTimestamp: '2024-01-01T01:00:00+01:00' }, old), []);
    assert.deepEqual(messages(validateObjectMetaUpdate({ ...old, creationTimestamp: undefined }, old)), [
      'metadata.creationTimestamp: Invalid value: null: field is immutable',
    ]);
  });

  it('forbids clients from setting or clearing deletionTimestamp and deletionGracePeriodSeconds', () => {
    assert.deepEqual(
      messages(validateObjectMetaUpdate({ ...old, deletionTimestamp: '2024-02-01T00:00:00Z', deletionGracePeriodSeconds: 30 }, old)),
      [
        'metadata.deletionTimestamp: Invalid value: "2024-02-01T00:00:00Z": field is immutable',
        'metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable',
      ],
    );
    const deleting = { ...old, deletionTimestamp: '2024-02-01T00:00:00Z', deletionGracePeriodSeconds: 0 };
    assert.deepEqual(messages(validateObjectMetaUpdate({ ...deleting, deletionTimestamp: undefined, deletionGracePeriodSeconds: undefined }, deleting)), [
      'metadata.deletionTimestamp: Invalid value: null: field is immutable',
      'metadata.deletionGracePeriodSeconds: Invalid value: null: field is immutable',
    ]);
  });

  it('requires a resourceVersion', () => {
    assert.deepEqual(messages(validateObjectMetaUpdate({ ...old, resourceVersion: undefined }, old)), [
      'metadata.resourceVersion: Invalid value: "": must be specified for an update',
    ]);
  });

  it('rejects a decremented generation', () => {
    assert.deepEqual(messages(validateObjectMetaUpdate({ ...old, generation: 1 }, old)), [
      'metadata.generation: Invalid value: 1: must not be decremented',
    ]);
  });

  it('forbids adding finalizers once deletion started, but allows removing them', () => {
    const deleting = { ...old, deletionTimestamp: '2024-02-01T00:00:00Z', finalizers: ['a.io/keep', 'a.io/drop'] };
    assert.deepEqual(validateObjectMetaUpdate({ ...deleting, finalizers: ['a.io/keep'] }, deleting), []);
    assert.deepEqual(messages(validateObjectMetaUpdate({ ...deleting, finalizers: ['z.io/new', 'a.io/keep', 'b.io/new'] }, deleting)), [
      'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"b.io/new", "z.io/new"}',
    ]);
  });

  it('allows adding finalizers while the object is not being deleted', () => {
    assert.deepEqual(validateObjectMetaUpdate({ ...old, finalizers: ['a.io/x'] }, old), []);
  });

  it('validates labels of the new metadata', () => {
    const value = 'v'.repeat(64);
    assert.deepEqual(messages(validateObjectMetaUpdate({ ...old, labels: { a: value } }, old)), [
      `metadata.labels: Invalid value: "${value}": must be no more than 63 bytes`,
    ]);
  });

  it('re-runs create validation of the new metadata only when options are given', () => {
    const next = { ...old, finalizers: ['a/b/c'] };
    assert.deepEqual(validateObjectMetaUpdate(next, old), []);
    const errs = validateObjectMetaUpdate(next, old, NAMESPACED);
    assert.equal(errs.length, 1);
    assert.equal(errs[0].field, 'metadata.finalizers');
  });
});
