import type { StructuralSchema } from '@plinth/apimachinery';
import { objectMetaProperty, typeMetaProperties } from '../../schema/object-meta.schema.js';

const time = (description: string): StructuralSchema => ({ type: 'string', format: 'date-time', description });
const strings = (description: string): StructuralSchema => ({ type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic', description });

/** certificates.k8s.io/v1 CertificateSigningRequestSpec. */
const csrSpecSchema: StructuralSchema = {
  type: 'object',
  description: 'CertificateSigningRequestSpec contains the certificate request.',
  required: ['request', 'signerName'],
  properties: {
    request: { type: 'string', format: 'byte', 'x-kubernetes-list-type': 'atomic', description: 'request contains an x509 certificate signing request encoded in a "CERTIFICATE REQUEST" PEM block. When serialized as JSON or YAML, the data is additionally base64-encoded.' },
    signerName: { type: 'string', description: 'signerName indicates the requested signer, and is a qualified name. List/watch requests for CertificateSigningRequests can filter on this field using a "spec.signerName=NAME" fieldSelector.' },
    expirationSeconds: { type: 'integer', format: 'int32', description: 'expirationSeconds is the requested duration of validity of the issued certificate. The certificate signer may issue a certificate with a different validity duration so a client must check the delta between the notBefore and and notAfter fields in the issued certificate to determine the actual duration. The minimum valid value for expirationSeconds is 600, i.e. 10 minutes.' },
    usages: strings('usages specifies a set of key usages requested in the issued certificate. Requests for TLS client certificates typically request: "digital signature", "key encipherment", "client auth".'),
    username: { type: 'string', description: 'username contains the name of the user that created the CertificateSigningRequest. Populated by the API server on creation and immutable.' },
    uid: { type: 'string', description: 'uid contains the uid of the user that created the CertificateSigningRequest. Populated by the API server on creation and immutable.' },
    groups: strings('groups contains group membership of the user that created the CertificateSigningRequest. Populated by the API server on creation and immutable.'),
    extra: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } }, description: 'extra contains extra attributes of the user that created the CertificateSigningRequest. Populated by the API server on creation and immutable.' },
  },
};

/** certificates.k8s.io/v1 CertificateSigningRequestCondition. */
const csrConditionSchema: StructuralSchema = {
  type: 'object',
  description: 'CertificateSigningRequestCondition describes a condition of a CertificateSigningRequest object',
  required: ['type', 'status'],
  properties: {
    type: { type: 'string', description: 'type of the condition. Known conditions are "Approved", "Denied", and "Failed".' },
    status: { type: 'string', description: 'status of the condition, one of True, False, Unknown. Approved, Denied, and Failed conditions may not be "False" or "Unknown".' },
    reason: { type: 'string', description: 'reason indicates a brief reason for the request state' },
    message: { type: 'string', description: 'message contains a human readable message with details about the request state' },
    lastUpdateTime: time('lastUpdateTime is the time of the last update to this condition'),
    lastTransitionTime: time('lastTransitionTime is the time the condition last transitioned from one status to another. If unset, when a new condition type is added or an existing condition\'s status is changed, the server defaults this to the current time.'),
  },
};

/** certificates.k8s.io/v1 CertificateSigningRequest. */
export const csrSchema: StructuralSchema = {
  type: 'object',
  description: 'CertificateSigningRequest objects provide a mechanism to obtain x509 certificates by submitting a certificate signing request, and having it asynchronously approved and issued.',
  required: ['spec'],
  properties: {
    ...typeMetaProperties(),
    metadata: objectMetaProperty(),
    spec: { ...csrSpecSchema, description: 'spec contains the certificate request, and is immutable after creation. Only the request, signerName, expirationSeconds, and usages fields can be set on creation. Other fields are derived by Kubernetes and cannot be modified by users.' },
    status: {
      type: 'object',
      description: 'status contains information about whether the request is approved or denied, and the certificate issued by the signer, or the failure condition indicating signer failure.',
      properties: {
        conditions: { type: 'array', items: csrConditionSchema, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'], description: 'conditions applied to the request. Known conditions are "Approved", "Denied", and "Failed".' },
        certificate: { type: 'string', format: 'byte', 'x-kubernetes-list-type': 'atomic', description: 'certificate is populated with an issued certificate by the signer after an Approved condition is present. This field is set via the /status subresource. Once populated, this field is immutable.' },
      },
    },
  },
};
