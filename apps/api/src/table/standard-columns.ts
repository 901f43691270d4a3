import { isPlainObject } from '@plinth/apimachinery';
import type { TableColumn } from '../registry/resource-definition.js';

/** The Name column every kind's Table starts with (upstream's description). */
export const nameColumn: TableColumn = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description:
    'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
  priority: 0,
};

/** The Age column of the built-in kinds (upstream's description of creationTimestamp). */
export const ageColumn: TableColumn = {
  name: 'Age',
  type: 'string',
  format: '',
  description:
    'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
  priority: 0,
};

/** How many keys `maps` hold in all (a Table cell of ConfigMaps and Secrets); what is not an object counts none. */
export function countKeys(...maps: unknown[]): number {
  return maps.reduce<number>((n, m) => n + (isPlainObject(m) ? Object.keys(m).length : 0), 0);
}
