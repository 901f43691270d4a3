import { type FieldError, fieldErrors, isDNS1123Subdomain, isPlainObject, isQualifiedName, type KubeObject } from '@plinth/apimachinery';
import { isDeepStrictEqual } from 'node:util';

const REPORTING_INSTANCE_LIMIT = 128;
const ACTION_LIMIT = 128;
const REASON_LIMIT = 128;
const NOTE_LIMIT = 1024;

/** Which API a write came through: core/v1 keeps upstream's lenient legacy rules; events.k8s.io/v1 adds the strict ones. */
export type EventApi = 'core' | 'events.k8s.io';

function str(obj: KubeObject | Record<string, unknown>, key: string): string {
  return typeof obj[key] === 'string' ? (obj[key] as string) : '';
}

function refNamespace(ev: KubeObject): string {
  return isPlainObject(ev.involvedObject) ? str(ev.involvedObject, 'namespace') : '';
}

function maxLength(errs: FieldError[], field: string, value: string, limit: number): void {
  if (value.length > limit) errs.push(fieldErrors.invalid(field, '', `can have at most ${limit} characters`));
}

/** Upstream's legacyValidateEvent, on the core/v1 (stored) form: namespaces agree; new-style events carry their reporting fields. */
function legacyValidateEvent(ev: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const ns = ev.metadata.namespace ?? '';
  const involvedNs = refNamespace(ev);
  const mismatch = () => errs.push(fieldErrors.invalid('involvedObject.namespace', involvedNs, 'does not match event.namespace'));
  if (!ev.eventTime) {
    if (involvedNs === '' ? ns !== '' && ns !== 'default' : ns !== involvedNs) mismatch();
  } else {
    if (involvedNs === '' && ns !== 'default' && ns !== 'kube-system') mismatch();
    const controller = str(ev, 'reportingComponent');
    if (controller === '') errs.push(fieldErrors.required('reportingController'));
    for (const msg of isQualifiedName(controller)) errs.push(fieldErrors.invalid('reportingController', controller, msg));
    const instance = str(ev, 'reportingInstance');
    if (instance === '') errs.push(fieldErrors.required('reportingInstance'));
    maxLength(errs, 'reportingInstance', instance, REPORTING_INSTANCE_LIMIT);
    if (str(ev, 'action') === '') errs.push(fieldErrors.required('action'));
    maxLength(errs, 'action', str(ev, 'action'), ACTION_LIMIT);
    if (str(ev, 'reason') === '') errs.push(fieldErrors.required('reason'));
    maxLength(errs, 'reason', str(ev, 'reason'), REASON_LIMIT);
    maxLength(errs, 'message', str(ev, 'message'), NOTE_LIMIT);
  }
  for (const msg of isDNS1123Subdomain(ns)) errs.push(fieldErrors.invalid('namespace', ns, msg));
  return errs;
}

function validateSeries(ev: KubeObject): FieldError[] {
  if (!isPlainObject(ev.series)) return [];
  const errs: FieldError[] = [];
  const count = typeof ev.series.count === 'number' ? ev.series.count : 0;
  if (count < 2) errs.push(fieldErrors.invalid('series.count', '', 'should be at least 2'));
  if (!ev.series.lastObservedTime) errs.push(fieldErrors.required('series.lastObservedTime'));
  return errs;
}

function sourceSet(ev: KubeObject): boolean {
  return isPlainObject(ev.source) && (str(ev.source, 'component') !== '' || str(ev.source, 'host') !== '');
}

/**
 * Upstream's ValidateEventCreate on the core/v1 (stored) form of `ev`, with
 * core field paths as upstream reports them for both APIs: legacy rules for
 * writes through core/v1; through events.k8s.io/v1 also eventTime required,
 * type Normal or Warning, series sane, and the deprecated fields unset.
 * Metadata is validated by the generic store. Does not mutate `ev`.
 */
export function validateEventCreate(ev: KubeObject, api: EventApi): FieldError[] {
  const errs = legacyValidateEvent(ev);
  if (api === 'core') return errs;
  errs.push(...validateSeries(ev));
  if (!ev.eventTime) errs.push(fieldErrors.required('eventTime'));
  const type = str(ev, 'type');
  if (type !== 'Normal' && type !== 'Warning') errs.push(fieldErrors.invalid('type', '', `has invalid value: ${type}`));
  if (ev.firstTimestamp) errs.push(fieldErrors.invalid('firstTimestamp', '', 'needs to be unset'));
  if (ev.lastTimestamp) errs.push(fieldErrors.invalid('lastTimestamp', '', 'needs to be unset'));
  if (typeof ev.count === 'number' && ev.count !== 0) errs.push(fieldErrors.invalid('count', '', 'needs to be unset'));
  if (sourceSet(ev)) errs.push(fieldErrors.invalid('source', '', 'needs to be unset'));
  return errs;
}

/** The fields an update through events.k8s.io/v1 may not change (core names, upstream's order). */
const IMMUTABLE = ['involvedObject', 'reason', 'message', 'source', 'firstTimestamp', 'lastTimestamp', 'count', 'type', 'eventTime', 'action', 'related', 'reportingComponent', 'reportingInstance'];

/**
 * Upstream's ValidateEventUpdate on core/v1 (stored) forms: legacy rules;
 * through events.k8s.io/v1 also a changed series validated and every
 * descriptive field immutable. Does not mutate its inputs.
 */
export function validateEventUpdate(ev: KubeObject, old: KubeObject, api: EventApi): FieldError[] {
  const errs = legacyValidateEvent(ev);
  if (api === 'core') return errs;
  if (!isDeepStrictEqual(ev.series, old.series)) errs.push(...validateSeries(ev));
  for (const f of IMMUTABLE) {
    if (!isDeepStrictEqual(ev[f] ?? null, old[f] ?? null)) errs.push(fieldErrors.invalid(f === 'reportingComponent' ? 'reportingController' : f, ev[f] ?? null, 'field is immutable'));
  }
  return errs;
}
