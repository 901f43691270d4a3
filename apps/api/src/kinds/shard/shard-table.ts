import { isPlainObject, type KubeObject } from '@plinth/apimachinery';
import type { TableConvertor } from '../../registry/resource-definition.js';
import { ageCell } from '../../table/human-duration.js';
import { ageColumn, nameColumn } from '../../table/standard-columns.js';
import { SHARD_DURABLE_CONDITION, SHARD_READY_CONDITION } from './shard-api.js';

const BINARY_SUFFIXES = ['Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

/**
 * `bytes` as a short binary quantity, the way a human reads a size: below
 * 1024 the plain number ("512"); above, the largest binary suffix that
 * keeps the value under 1024, with one decimal below 10 ("1.2Mi", "2Ki")
 * and none from 10 on ("12Mi", "512Gi"), rounded to nearest. Every result
 * is a valid Kubernetes quantity. Pure.
 */
export function humanBytes(bytes: number): string {
  if (bytes < 1024) return String(Math.round(bytes));
  let value = bytes;
  let i = -1;
  // Round at the shown precision before settling the suffix, so 1023.97Ki shows as 1Mi, never 1024Ki.
  const shown = (v: number): number => (v < 10 ? Math.round(v * 10) / 10 : Math.round(v));
  while (i < BINARY_SUFFIXES.length - 1 && (i < 0 || shown(value) >= 1024)) {
    value /= 1024;
    i++;
  }
  return `${shown(value)}${BINARY_SUFFIXES[i]}`;
}

function status(o: KubeObject): Record<string, unknown> {
  return isPlainObject(o.status) ? o.status : {};
}

/** The Ready condition's status; "Unknown" until the platform reported one (as kubectl shows nodes). */
export function readyCell(o: KubeObject): string {
  const conditions = status(o).conditions;
  const ready = Array.isArray(conditions) ? conditions.find((c) => isPlainObject(c) && c.type === SHARD_READY_CONDITION) : undefined;
  return isPlainObject(ready) && typeof ready.status === 'string' ? ready.status : 'Unknown';
}

/** The SurvivesPrimaryLoss condition's status; "Unknown" until reported. */
function durableCell(o: KubeObject): string {
  const conditions = status(o).conditions;
  const c = Array.isArray(conditions) ? conditions.find((x) => isPlainObject(x) && x.type === SHARD_DURABLE_CONDITION) : undefined;
  return isPlainObject(c) && typeof c.status === 'string' ? c.status : 'Unknown';
}

function countCell(o: KubeObject, key: 'tenants' | 'objects'): number | null {
  const v = status(o)[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function sizeCell(o: KubeObject): string | null {
  const v = status(o).bytes;
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? humanBytes(v) : null;
}

function hostCell(o: KubeObject): string | null {
  const v = status(o).host;
  return typeof v === 'string' ? v : null;
}

/**
 * The Table of Shards: NAME, READY, TENANTS, OBJECTS, SIZE, AGE, and HOST
 * and SURVIVES-PRIMARY-LOSS with -o wide. A count or size not reported yet is null (kubectl shows
 * `<none>`).
 */
export const shardTable: TableConvertor = {
  columns: [
    nameColumn,
    { name: 'Ready', type: 'string', format: '', description: 'Status of the Ready condition: True when the shard is reachable and its migrations are applied.', priority: 0 },
    { name: 'Tenants', type: 'integer', format: '', description: 'Tenants that live on the shard.', priority: 0 },
    { name: 'Objects', type: 'integer', format: '', description: 'Objects the shard holds, of every tenant.', priority: 0 },
    { name: 'Size', type: 'string', format: '', description: 'Size of the stored objects, with binary suffixes (Ki, Mi, Gi…).', priority: 0 },
    ageColumn,
    { name: 'Host', type: 'string', format: '', description: 'host:port/database of the shard\'s connection URL (never the password).', priority: 1 },
    { name: 'Survives-Primary-Loss', type: 'string', format: '', description: 'Status of the SurvivesPrimaryLoss condition: True when a write acknowledged now is on a synchronous standby too.', priority: 1 },
  ],
  cells: (o: KubeObject, now: Date) => [
    o.metadata.name,
    readyCell(o),
    countCell(o, 'tenants'),
    countCell(o, 'objects'),
    sizeCell(o),
    ageCell(o.metadata.creationTimestamp, now),
    hostCell(o),
    durableCell(o),
  ],
};
