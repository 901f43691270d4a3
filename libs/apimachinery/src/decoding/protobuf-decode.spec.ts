import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DecodeError } from './decode-error.js';
import { k8sProtoRoot } from './k8s-proto.descriptor.js';
import { decodeKubernetesProtobuf } from './protobuf-decode.js';

const MAGIC = [0x6b, 0x38, 0x73, 0x00];
const META = 'k8s.io.apimachinery.pkg.apis.meta.v1.';

/** Concatenates byte values and UTF-8 strings. */
function bytes(...parts: (number | string | Uint8Array)[]): Uint8Array {
  const out: number[] = [];
  for (const part of parts) {
    if (typeof part === 'number') out.push(part);
    else out.push(...(typeof part === 'string' ? new TextEncoder().encode(part) : part));
  }
  return new Uint8Array(out);
}

function encode(messageName: string, value: Record<string, unknown>): Uint8Array {
  const type = k8sProtoRoot().lookupType(messageName);
  return type.encode(type.fromObject(value)).finish();
}

/** A full request body: magic + Unknown{typeMeta, raw} built with the transcribed types. */
function body(apiVersion: string, kind: string, messageName: string, value: Record<string, unknown>): Uint8Array {
  const raw = encode(messageName, value);
  const envelope = encode('k8s.io.apimachinery.pkg.runtime.Unknown', { typeMeta: { apiVersion, kind }, raw, contentEncoding: '', contentType: '' });
  return bytes(...MAGIC, envelope);
}

function decodeError(input: Uint8Array, expected?: { apiVersion: string; kind: string }): DecodeError {
  try {
    decodeKubernetesProtobuf(input, expected);
  } catch (err) {
    assert.ok(err instanceof DecodeError, `expected DecodeError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the body to be rejected');
}

const namespaceBody = (value: Record<string, unknown>) => body('v1', 'Namespace', 'k8s.io.api.core.v1.Namespace', value);

describe('decodeKubernetesProtobuf: golden bytes', () => {
  it('decodes a hand-encoded Namespace as kubectl sends it', () => {
    const typeMeta = bytes(0x0a, 0x02, 'v1', 0x12, 0x09, 'Namespace');
    const raw = bytes(0x0a, 0x06, 0x0a, 0x04, 'demo');
    const input = bytes(...MAGIC, 0x0a, typeMeta.length, typeMeta, 0x12, raw.length, raw, 0x1a, 0x00, 0x22, 0x00);
    const decoded = decodeKubernetesProtobuf(input);
    assert.deepEqual(decoded, { kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'demo' }, spec: {}, status: {} });
    assert.deepEqual(Object.keys(decoded), ['kind', 'apiVersion', 'metadata', 'spec', 'status']);
  });

  it('decodes a hand-encoded ConfigMap with a data entry and a namespace', () => {
    const typeMeta = bytes(0x0a, 0x02, 'v1', 0x12, 0x09, 'ConfigMap');
    const meta = bytes(0x0a, 0x02, 'cm', 0x1a, 0x07, 'default');
    const entry = bytes(0x0a, 0x01, 'a', 0x12, 0x01, 'b');
    const raw = bytes(0x0a, meta.length, meta, 0x12, entry.length, entry, 0x20, 0x01);
    const decoded = decodeKubernetesProtobuf(bytes(...MAGIC, 0x0a, typeMeta.length, typeMeta, 0x12, raw.length, raw));
    assert.deepEqual(decoded, { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'cm', namespace: 'default' }, immutable: true, data: { a: 'b' } });
  });
});

describe('decodeKubernetesProtobuf: ObjectMeta', () => {
  it('renders every ObjectMeta field in Go struct order with Go JSON types', () => {
    const decoded = decodeKubernetesProtobuf(
      namespaceBody({
        metadata: {
          name: 'n',
          generateName: 'g-',
          namespace: 'ns',
          selfLink: '/s',
          uid: 'u-1',
          resourceVersion: '42',
          generation: 3,
          creationTimestamp: { seconds: 1704164645 },
          deletionTimestamp: { seconds: 1704164705, nanos: 500 },
          deletionGracePeriodSeconds: 0,
          labels: { b: '2', a: '1' },
          annotations: { note: 'x' },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'd', uid: 'o-1', controller: false, blockOwnerDeletion: true }],
          finalizers: ['f/one'],
          managedFields: [
            { manager: 'kubectl', operation: 'Update', apiVersion: 'v1', time: { seconds: 0 }, fieldsType: 'FieldsV1', fieldsV1: { Raw: bytes('{"f:metadata":{}}') }, subresource: 'status' },
          ],
        },
      }),
    );
    assert.deepEqual(decoded.metadata, {
      name: 'n',
      generateName: 'g-',
      namespace: 'ns',
      selfLink: '/s',
      uid: 'u-1',
      resourceVersion: '42',
      generation: 3,
      creationTimestamp: '2024-01-02T03:04:05Z',
      deletionTimestamp: '2024-01-02T03:05:05Z',
      deletionGracePeriodSeconds: 0,
      labels: { a: '1', b: '2' },
      annotations: { note: 'x' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'd', uid: 'o-1', controller: false, blockOwnerDeletion: true }],
      finalizers: ['f/one'],
      managedFields: [
        { manager: 'kubectl', operation: 'Update', apiVersion: 'v1', time: '1970-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': {} }, subresource: 'status' },
      ],
    });
    const meta = decoded.metadata as Record<string, unknown>;
    assert.deepEqual(Object.keys(meta).slice(0, 8), ['name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation', 'creationTimestamp']);
    assert.deepEqual(Object.keys(meta.labels as object), ['a', 'b']);
  });

  it('omits empty strings, zero generation, unset pointers and a zero creationTimestamp', () => {
    const decoded = decodeKubernetesProtobuf(namespaceBody({ metadata: { name: '', generation: 0, creationTimestamp: { seconds: -62135596800 }, labels: {}, finalizers: [] } }));
    assert.deepEqual(decoded.metadata, {});
  });

  it('keeps owner reference identity fields even when empty, as they lack omitempty', () => {
    const decoded = decodeKubernetesProtobuf(namespaceBody({ metadata: { ownerReferences: [{}] } }));
    assert.deepEqual((decoded.metadata as Record<string, unknown>).ownerReferences, [{ apiVersion: '', kind: '', name: '', uid: '' }]);
  });

  it('renders a deletionTimestamp sent as an empty message as null, as Go does for a non-nil zero *Time', () => {
    const decoded = decodeKubernetesProtobuf(namespaceBody({ metadata: { name: 'n', deletionTimestamp: {} } }));
    assert.deepEqual(decoded.metadata, { name: 'n', deletionTimestamp: null });
  });

  it('renders a managedFields entry with an empty fieldsV1 as null', () => {
    const decoded = decodeKubernetesProtobuf(namespaceBody({ metadata: { managedFields: [{ manager: 'm', fieldsV1: {} }] } }));
    assert.deepEqual((decoded.metadata as Record<string, unknown>).managedFields, [{ manager: 'm', fieldsV1: null }]);
  });

  it('formats times outside four-digit years and large int64 values as Go would', () => {
    const decoded = decodeKubernetesProtobuf(namespaceBody({ metadata: { creationTimestamp: { seconds: 253402300800 }, deletionTimestamp: { seconds: -62167219200 }, generation: '9007199254740993' } }));
    const meta = decoded.metadata as Record<string, unknown>;
    assert.equal(meta.creationTimestamp, '10000-01-01T00:00:00Z');
    assert.equal(meta.deletionTimestamp, '0000-01-01T00:00:00Z');
    assert.equal(meta.generation, 9007199254740992);
  });

  it('keeps a __proto__ label as an own property', () => {
    const decoded = decodeKubernetesProtobuf(namespaceBody({ metadata: { labels: { ['__proto__']: 'x' } } }));
    const labels = (decoded.metadata as Record<string, unknown>).labels as Record<string, unknown>;
    assert.ok(Object.hasOwn(labels, '__proto__'));
    assert.equal(Object.getPrototypeOf(labels), Object.prototype);
  });

  it('merges a repeated metadata field and skips unknown fields, groups included', () => {
    const first = bytes(0x0a, 0x04, 0x0a, 0x02, 'n1');
    const unknown = bytes(0xf8, 0x06, 0x05, 0xfb, 0x06, 0x08, 0x01, 0xfc, 0x06);
    const second = bytes(0x0a, 0x04 + unknown.length, 0x1a, 0x02, 'ns', unknown);
    const raw = bytes(first, second);
    const typeMeta = bytes(0x0a, 0x02, 'v1', 0x12, 0x09, 'Namespace');
    const decoded = decodeKubernetesProtobuf(bytes(...MAGIC, 0x0a, typeMeta.length, typeMeta, 0x12, raw.length, raw));
    assert.deepEqual(decoded.metadata, { name: 'n1', namespace: 'ns' });
  });
});

describe('decodeKubernetesProtobuf: kinds', () => {
  it('decodes Namespace spec and status, with a condition lacking lastTransitionTime rendered as null', () => {
    const decoded = decodeKubernetesProtobuf(
      namespaceBody({ spec: { finalizers: ['kubernetes'] }, status: { phase: 'Terminating', conditions: [{ type: 'NamespaceDeletionContentFailure', status: 'False', reason: 'R' }] } }),
    );
    assert.deepEqual(decoded.spec, { finalizers: ['kubernetes'] });
    assert.deepEqual(decoded.status, { phase: 'Terminating', conditions: [{ type: 'NamespaceDeletionContentFailure', status: 'False', lastTransitionTime: null, reason: 'R' }] });
  });

  it('decodes a ConfigMap with base64 binaryData and an explicit immutable false', () => {
    const decoded = decodeKubernetesProtobuf(body('v1', 'ConfigMap', 'k8s.io.api.core.v1.ConfigMap', { metadata: { name: 'c' }, immutable: false, data: { k: 'v' }, binaryData: { bin: bytes(0xff, 0x00) } }));
    assert.deepEqual(decoded, { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c' }, immutable: false, data: { k: 'v' }, binaryData: { bin: '/wA=' } });
  });

  it('decodes a Secret, sorting keys by code point and rendering an empty value as ""', () => {
    const decoded = decodeKubernetesProtobuf(
      body('v1', 'Secret', 'k8s.io.api.core.v1.Secret', { metadata: { name: 's' }, data: { '\u{1F600}': bytes('a'), '\uFFFD': bytes('b'), empty: new Uint8Array() }, stringData: { x: 'y' }, type: 'Opaque' }),
    );
    assert.deepEqual(decoded, { kind: 'Secret', apiVersion: 'v1', metadata: { name: 's' }, data: { empty: '', '\uFFFD': 'Yg==', '\u{1F600}': 'YQ==' }, stringData: { x: 'y' }, type: 'Opaque' });
    assert.deepEqual(Object.keys(decoded.data as object), ['empty', '\uFFFD', '\u{1F600}']);
  });

  it('decodes DeleteOptions in any group version, keeping explicit zero pointers', () => {
    const value = { gracePeriodSeconds: 0, preconditions: { uid: 'u', resourceVersion: '' }, orphanDependents: false, propagationPolicy: 'Foreground', dryRun: ['All'] };
    for (const apiVersion of ['v1', 'meta.k8s.io/v1', 'apps/v1']) {
      const decoded = decodeKubernetesProtobuf(body(apiVersion, 'DeleteOptions', `${META}DeleteOptions`, value));
      assert.deepEqual(decoded, { kind: 'DeleteOptions', apiVersion, gracePeriodSeconds: 0, preconditions: { uid: 'u', resourceVersion: '' }, orphanDependents: false, propagationPolicy: 'Foreground', dryRun: ['All'] });
    }
  });

  it('decodes an empty Scale with spec {} and status.replicas 0, as Go always emits them', () => {
    const decoded = decodeKubernetesProtobuf(body('autoscaling/v1', 'Scale', 'k8s.io.api.autoscaling.v1.Scale', {}));
    assert.deepEqual(decoded, { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: {}, spec: {}, status: { replicas: 0 } });
    const full = decodeKubernetesProtobuf(body('autoscaling/v1', 'Scale', 'k8s.io.api.autoscaling.v1.Scale', { spec: { replicas: 3 }, status: { replicas: 2, selector: 'app=x' } }));
    assert.deepEqual([full.spec, full.status], [{ replicas: 3 }, { replicas: 2, selector: 'app=x' }]);
  });

  it('decodes a MutatingWebhookConfiguration with the rule inlined and Go nulls for unset non-omitempty fields', () => {
    const webhook = {
      name: 'w.example.com',
      clientConfig: { service: { namespace: 'ns', name: 'svc', port: 443 }, caBundle: bytes('ca') },
      rules: [{ operations: ['CREATE'], rule: { apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: '*' } }],
      namespaceSelector: { matchExpressions: [{ key: 'k', operator: 'Exists' }] },
      timeoutSeconds: 5,
      matchConditions: [{ name: 'm', expression: 'true' }],
    };
    const decoded = decodeKubernetesProtobuf(body('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', 'k8s.io.api.admissionregistration.v1.MutatingWebhookConfiguration', { Webhooks: [webhook] }));
    assert.deepEqual(decoded.webhooks, [
      {
        name: 'w.example.com',
        clientConfig: { service: { namespace: 'ns', name: 'svc', port: 443 }, caBundle: 'Y2E=' },
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: '*' }],
        namespaceSelector: { matchExpressions: [{ key: 'k', operator: 'Exists' }] },
        sideEffects: null,
        timeoutSeconds: 5,
        admissionReviewVersions: null,
        matchConditions: [{ name: 'm', expression: 'true' }],
      },
    ]);
  });

  it('decodes a ValidatingWebhookConfiguration reading objectSelector from field 10', () => {
    const decoded = decodeKubernetesProtobuf(
      body('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'k8s.io.api.admissionregistration.v1.ValidatingWebhookConfiguration', {
        Webhooks: [{ name: 'v', clientConfig: { url: 'https://x' }, objectSelector: { matchLabels: { a: 'b' } }, sideEffects: 'None', admissionReviewVersions: ['v1'] }],
      }),
    );
    assert.deepEqual(decoded.webhooks, [{ name: 'v', clientConfig: { url: 'https://x' }, objectSelector: { matchLabels: { a: 'b' } }, sideEffects: 'None', admissionReviewVersions: ['v1'] }]);
  });
});

describe('decodeKubernetesProtobuf: apiVersion and kind', () => {
  it('takes a missing apiVersion and kind from the expected type', () => {
    const raw = bytes(0x0a, 0x03, 0x0a, 0x01, 'x');
    const input = bytes(...MAGIC, 0x12, raw.length, raw);
    assert.deepEqual(decodeKubernetesProtobuf(input, { apiVersion: 'v1', kind: 'Namespace' }), { kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'x' }, spec: {}, status: {} });
  });

  it('rejects a body without kind, quoting the sent typeMeta', () => {
    const typeMeta = bytes(0x0a, 0x02, 'v1');
    const err = decodeError(bytes(...MAGIC, 0x0a, typeMeta.length, typeMeta));
    assert.equal(err.message, `Object 'Kind' is missing in 'runtime.TypeMeta{APIVersion:"v1", Kind:""}'`);
    assert.equal(err.beforeKind, true);
  });

  it('rejects a body without a version after the kind is known', () => {
    const typeMeta = bytes(0x12, 0x09, 'Namespace');
    const err = decodeError(bytes(...MAGIC, 0x0a, typeMeta.length, typeMeta));
    assert.equal(err.message, `Object 'apiVersion' is missing in 'runtime.TypeMeta{APIVersion:"", Kind:"Namespace"}'`);
    assert.equal(err.beforeKind, false);
  });

  it('rejects a kind it cannot decode with upstream not-registered wording', () => {
    const err = decodeError(body('apps/v1', 'Deployment', 'k8s.io.api.core.v1.Namespace', {}));
    assert.equal(err.message, 'no kind "Deployment" is registered for version "apps/v1" in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"');
    assert.equal(err.beforeKind, false);
  });
});

describe('decodeKubernetesProtobuf: malformed bodies', () => {
  it('rejects empty, foreign and magic-only bodies', () => {
    assert.equal(decodeError(new Uint8Array()).message, 'empty data');
    assert.equal(decodeError(bytes('{"kind":"Namespace"}')).message, 'provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]');
    assert.equal(decodeError(bytes(...MAGIC)).message, 'empty body');
  });

  it('reports a truncated envelope as unexpected EOF before the kind is known', () => {
    const err = decodeError(bytes(...MAGIC, 0x0a, 0x10, 0x0a));
    assert.deepEqual([err.message, err.beforeKind], ['unexpected EOF', true]);
  });

  it('reports errors inside the object with beforeKind false', () => {
    const typeMeta = bytes(0x0a, 0x02, 'v1', 0x12, 0x09, 'Namespace');
    const wrap = (raw: Uint8Array) => bytes(...MAGIC, 0x0a, typeMeta.length, typeMeta, 0x12, raw.length, raw);
    const cases: [Uint8Array, string][] = [
      [bytes(0x0a, 0x05, 0x0a), 'unexpected EOF'],
      [bytes(0x0a, 0x02, 0x08, 0x01), 'proto: wrong wireType = 0 for field Name'],
      [bytes(0x0a, 0x02, 0x2a, 0x00, 0x0a, 0x02, 0x28, 0x01), 'proto: wrong wireType = 0 for field UID'],
      [bytes(0x0c), 'proto: Namespace: wiretype end group for non-group'],
      [bytes(0x00), 'proto: Namespace: illegal tag 0 (wire type 0)'],
      [bytes(0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), 'proto: integer overflow'],
      [bytes(0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), 'proto: negative length found during unmarshaling'],
      [bytes(0xa6, 0x06), 'proto: illegal wireType 6'],
    ];
    for (const [raw, message] of cases) {
      const err = decodeError(wrap(raw));
      assert.deepEqual([err.message, err.beforeKind], [message, false]);
    }
  });

  it('rejects managedFields whose fieldsV1 is not JSON', () => {
    const err = decodeError(namespaceBody({ metadata: { managedFields: [{ fieldsV1: { Raw: bytes('{nope') } }] } }));
    assert.match(err.message, /^json: error calling MarshalJSON for type \*v1\.FieldsV1: /);
  });

  it('throws nothing but DecodeError for arbitrary bytes after the magic', () => {
    let seed = 12345;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) & 0xff;
    const prefix = namespaceBody({ metadata: { name: 'n', labels: { a: 'b' } } });
    for (let i = 0; i < 500; i++) {
      const tail = Array.from({ length: next() % 40 }, next);
      const input = i % 2 === 0 ? bytes(...MAGIC, ...tail) : bytes(prefix.subarray(0, 4 + (next() % (prefix.length - 4))), ...tail);
      try {
        decodeKubernetesProtobuf(input);
      } catch (err) {
        assert.ok(err instanceof DecodeError, `input ${Buffer.from(input).toString('hex')} threw ${String(err)}`);
      }
    }
  });
});

describe('k8s protobuf transcription', () => {
  it('declares a Go JSON tag on every field', () => {
    const missing: string[] = [];
    const visit = (ns: { nestedArray: unknown[] }): void => {
      for (const nested of ns.nestedArray) {
        const type = nested as { fieldsArray?: { fullName: string; getOption(name: string): unknown }[]; nestedArray?: unknown[] };
        for (const field of type.fieldsArray ?? []) if (typeof field.getOption('(json)') !== 'string') missing.push(field.fullName);
        if (type.nestedArray) visit(type as { nestedArray: unknown[] });
      }
    };
    visit(k8sProtoRoot());
    assert.deepEqual(missing, []);
    assert.ok(k8sProtoRoot().lookupType(`${META}ObjectMeta`).fieldsArray.length >= 15);
  });
});
