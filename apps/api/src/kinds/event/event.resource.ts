import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import { coreFromEventsV1, eventsV1FromCore } from './event-conversion.js';
import { eventTable } from './event-table.js';
import { type EventApi, validateEventCreate, validateEventUpdate } from './event.validation.js';
import { eventSchema } from '../../schema/event-v1.schema.js';
import { eventsV1EventSchema } from '../../schema/events-v1.schema.js';
import { STANDARD_VERBS, type ResourceDefinition, type ResourceStrategy } from '../../registry/resource-definition.js';

function field(obj: unknown, key: string): string {
  return isPlainObject(obj) && typeof obj[key] === 'string' ? (obj[key] as string) : '';
}

function involved(o: KubeObject, key: string): string {
  return field(o.involvedObject, key);
}

/** Upstream's event strategy (registry/core/event): nothing to prepare; validation by the API the write came through. */
function eventStrategy(api: EventApi, toCore: (o: KubeObject) => KubeObject): ResourceStrategy {
  return {
    prepareForCreate: () => undefined,
    prepareForUpdate: () => undefined,
    validate: (obj) => validateEventCreate(toCore(obj), api),
    validateUpdate: (obj, old) => validateEventUpdate(toCore(obj), toCore(old), api),
    allowCreateOnUpdate: true,
    allowUnconditionalUpdate: true,
  };
}

/** Upstream's selectable Event fields, read from the stored (core/v1) form, for both APIs. */
const eventSelectableFields: ResourceDefinition['selectableFields'] = {
  'involvedObject.kind': (o) => involved(o, 'kind'),
  'involvedObject.namespace': (o) => involved(o, 'namespace'),
  'involvedObject.name': (o) => involved(o, 'name'),
  'involvedObject.uid': (o) => involved(o, 'uid'),
  'involvedObject.apiVersion': (o) => involved(o, 'apiVersion'),
  'involvedObject.resourceVersion': (o) => involved(o, 'resourceVersion'),
  'involvedObject.fieldPath': (o) => involved(o, 'fieldPath'),
  reason: (o) => field(o, 'reason'),
  reportingComponent: (o) => field(o, 'reportingComponent'),
  source: (o) => field(o.source, 'component'),
  type: (o) => field(o, 'type'),
};

const same = (o: KubeObject) => o;

/**
 * v1 Event: stored and served like any kind, so that `kubectl describe`
 * (which lists the events of the object it shows) and `kubectl get events`
 * work. Its rows are the stored form of events.k8s.io/v1 Events too.
 */
export const eventResource: ResourceDefinition = {
  group: '',
  version: 'v1',
  resource: 'events',
  singular: 'event',
  kind: 'Event',
  emptyObject: () => ({
    metadata: { creationTimestamp: null },
    involvedObject: {},
    source: {},
    firstTimestamp: null,
    lastTimestamp: null,
    eventTime: null,
    reportingComponent: '',
    reportingInstance: '',
  }),
  listKind: 'EventList',
  namespaced: true,
  shortNames: ['ev'],
  categories: [],
  verbs: STANDARD_VERBS,
  subresources: [],
  schema: eventSchema,
  strategy: eventStrategy('core', same),
  table: eventTable(same),
  selectableFields: eventSelectableFields,
  storageResource: 'events',
  tracksGeneration: false,
  returnDeletedObject: false,
  nameValidation: 'subdomain',
};

/**
 * events.k8s.io/v1 Event: the same objects as core/v1 Events (one storage
 * resource), converted field by field as upstream (regarding, note,
 * reportingController, deprecated*), with the strict validation upstream
 * applies to writes through this API.
 */
export const eventsV1Resource: ResourceDefinition = {
  ...eventResource,
  group: 'events.k8s.io',
  // The managed fields of an events.k8s.io/v1 create are computed against an empty object, as before.
  emptyObject: undefined,
  shortNames: ['ev'],
  schema: eventsV1EventSchema,
  strategy: eventStrategy('events.k8s.io', coreFromEventsV1),
  table: eventTable(coreFromEventsV1),
  conversion: { toStored: coreFromEventsV1, fromStored: eventsV1FromCore },
};
