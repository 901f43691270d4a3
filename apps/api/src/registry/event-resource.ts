import { eventSchema } from '../schema/event-v1.schema.js';
import { ageCell } from '../table/human-duration.js';
import { nameColumn } from '../table/standard-columns.js';
import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import type { ResourceDefinition } from './resource-definition.js';

function field(obj: unknown, key: string): string {
  return isPlainObject(obj) && typeof obj[key] === 'string' ? (obj[key] as string) : '';
}

function involved(o: KubeObject, key: string): string {
  return field(o.involvedObject, key);
}

/**
 * v1 Event: stored and served like any kind, so that `kubectl describe`
 * (which lists the events of the object it shows) and `kubectl get events`
 * work. Field selectors are upstream's selectable event fields.
 */
export const eventResource: ResourceDefinition = {
  group: '',
  version: 'v1',
  resource: 'events',
  singular: 'event',
  kind: 'Event',
  listKind: 'EventList',
  namespaced: true,
  shortNames: ['ev'],
  categories: [],
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: [],
  schema: eventSchema,
  strategy: {
    prepareForCreate: () => undefined,
    prepareForUpdate: () => undefined,
    validate: () => [],
    validateUpdate: () => [],
    allowCreateOnUpdate: true,
    allowUnconditionalUpdate: true,
  },
  table: {
    columns: [
      { name: 'Last Seen', type: 'string', format: '', description: 'The time at which the most recent occurrence of this event was recorded.', priority: 0 },
      { name: 'Type', type: 'string', format: '', description: 'Type of this event (Normal, Warning), new types could be added in the future.', priority: 0 },
      { name: 'Reason', type: 'string', format: '', description: 'A short, machine understandable string that gives the reason for the event.', priority: 0 },
      { name: 'Object', type: 'string', format: '', description: 'The object that this event is about.', priority: 0 },
      { name: 'Message', type: 'string', format: '', description: 'A human-readable description of the status of this operation.', priority: 0 },
      { ...nameColumn, priority: 1 },
    ],
    cells: (o: KubeObject, now: Date) => {
      const last = (typeof o.lastTimestamp === 'string' && o.lastTimestamp) || (typeof o.eventTime === 'string' && o.eventTime) || o.metadata.creationTimestamp;
      const kind = involved(o, 'kind').toLowerCase();
      return [ageCell(last, now), field(o, 'type'), field(o, 'reason'), `${kind}/${involved(o, 'name')}`, field(o, 'message'), o.metadata.name];
    },
  },
  selectableFields: {
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
  },
  storageResource: 'events',
  tracksGeneration: false,
  returnDeletedObject: false,
  nameValidation: 'subdomain',
};
