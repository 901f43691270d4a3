import type { AdmissionAttributes, GroupVersionKind, GroupVersionResource } from '../admission-attributes.js';
import type { WebhookResultStatus } from './webhook-errors.js';

/** The AdmissionReview versions Plinth speaks. */
export type ReviewVersion = 'v1' | 'v1beta1';

/** The group/version/kind/resource a webhook is called with (differs from the request's under matchPolicy Equivalent). */
export interface InvocationTarget {
  resource: GroupVersionResource;
  kind: GroupVersionKind;
  subresource: string;
}

/** The namespace an AdmissionRequest names: a namespace object's own name except on create, as upstream. */
export function requestNamespace(attrs: AdmissionAttributes): string {
  const isNamespace = attrs.resource.group === '' && attrs.resource.resource === 'namespaces';
  if (isNamespace && attrs.operation !== 'CREATE') return attrs.name;
  return attrs.namespace;
}

/**
 * The AdmissionReview body for one call, with every request field of
 * admission/v1 (Go's omitempty respected: subResource, requestSubResource,
 * name, namespace and empty userInfo parts are left out; object, oldObject
 * and options are null when absent). `object`/`oldObject` are the objects
 * in the webhook's version.
 */
export function buildAdmissionReview(
  version: ReviewVersion,
  uid: string,
  attrs: AdmissionAttributes,
  target: InvocationTarget,
  object: unknown,
  oldObject: unknown,
): Record<string, unknown> {
  const request: Record<string, unknown> = { uid, kind: target.kind, resource: target.resource };
  if (target.subresource) request.subResource = target.subresource;
  request.requestKind = attrs.kind;
  request.requestResource = attrs.resource;
  if (attrs.subresource) request.requestSubResource = attrs.subresource;
  if (attrs.name) request.name = attrs.name;
  const ns = requestNamespace(attrs);
  if (ns) request.namespace = ns;
  request.operation = attrs.operation;
  const user: Record<string, unknown> = {};
  if (attrs.user.username) user.username = attrs.user.username;
  if (attrs.user.uid) user.uid = attrs.user.uid;
  if (attrs.user.groups?.length) user.groups = attrs.user.groups;
  if (attrs.user.extra && Object.keys(attrs.user.extra).length > 0) user.extra = attrs.user.extra;
  request.userInfo = user;
  request.object = object ?? null;
  request.oldObject = oldObject ?? null;
  request.dryRun = attrs.dryRun;
  request.options = attrs.options ?? null;
  return { apiVersion: `admission.k8s.io/${version}`, kind: 'AdmissionReview', request };
}

/** A verified AdmissionResponse. */
export interface VerifiedResponse {
  allowed: boolean;
  /** The decoded JSON patch text (mutating only), undefined when none. */
  patch?: string;
  patchType?: string;
  result?: WebhookResultStatus;
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function decodePatch(response: Record<string, unknown>): string | undefined {
  const raw = response.patch;
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw !== 'string' || !BASE64_RE.test(raw)) throw new Error('json: cannot unmarshal response.patch: illegal base64 data');
  return Buffer.from(raw, 'base64').toString('utf8');
}

function stringList(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/**
 * Checks a decoded response body as upstream's VerifyAdmissionResponse and
 * returns its useful parts. Throws Error with upstream's text for an absent
 * response, a uid mismatch, a wrong apiVersion/kind (v1), or patch/patchType
 * inconsistencies.
 */
export function verifyAdmissionResponse(version: ReviewVersion, uid: string, mutating: boolean, body: unknown): VerifiedResponse {
  const review = isObject(body) ? body : {};
  const response = review.response;
  if (!isObject(response)) throw new Error('webhook response was absent');
  const base = {
    allowed: response.allowed === true,
    result: isObject(response.status) ? (response.status as WebhookResultStatus) : undefined,
    warnings: stringList(response.warnings),
    auditAnnotations: isObject(response.auditAnnotations) ? (response.auditAnnotations as Record<string, string>) : {},
  };
  const patch = decodePatch(response);
  if (version === 'v1beta1') {
    // v1beta1 never verified uid, kind or patchType: a patch is a JSON patch.
    return mutating && patch !== undefined ? { ...base, patch, patchType: 'JSONPatch' } : base;
  }
  if (response.uid !== uid) throw new Error(`expected response.uid="${uid}", got "${typeof response.uid === 'string' ? response.uid : ''}"`);
  const gv = typeof review.apiVersion === 'string' ? review.apiVersion : '/';
  const kind = typeof review.kind === 'string' ? review.kind : '';
  if (gv !== 'admission.k8s.io/v1' || kind !== 'AdmissionReview') {
    throw new Error(`expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${gv.includes('/') ? gv : `/${gv}`}, Kind=${kind}`);
  }
  const patchType = response.patchType;
  if (mutating) {
    if (patch !== undefined && (patchType === undefined || patchType === null)) throw new Error('webhook returned response.patch but not response.patchType');
    if (patch === undefined && patchType !== undefined && patchType !== null) throw new Error('webhook returned response.patchType but not response.patch');
    if (patchType === '') throw new Error('webhook returned invalid response.patchType of ""');
    return { ...base, patch, patchType: typeof patchType === 'string' ? patchType : undefined };
  }
  if (patch !== undefined) throw new Error('validating webhook may not return response.patch');
  if (patchType !== undefined && patchType !== null) throw new Error('validating webhook may not return response.patchType');
  return base;
}
