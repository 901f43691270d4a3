import { type FieldPath } from './path-set.js';
import { pathString } from './fields-v1.js';

/** One field an apply would change that another manager owns. `manager` is the owner's identifier (JSON). */
export interface Conflict {
  manager: string;
  path: FieldPath;
}

/** A StatusCause of a conflict, as upstream sends it. */
export interface ConflictCause {
  type: 'FieldManagerConflict';
  message: string;
  field: string;
}

/**
 * An apply that would take fields from other managers without `force`.
 * `message` and `causes` are upstream's (409 Conflict, reason Conflict).
 */
export class ApplyConflictError extends Error {
  readonly causes: ConflictCause[];

  constructor(readonly conflicts: Conflict[]) {
    super(conflictMessage(conflicts));
    this.causes = conflicts.map((c) => ({ type: 'FieldManagerConflict', message: `conflict with ${printManager(c.manager)}`, field: pathString(c.path) }));
  }
}

/**
 * A manager as people read it: `"name"`, `"name" with subresource "status"`,
 * and for updaters `using <apiVersion>` (and `at <time>` when known).
 */
export function printManager(identifier: string): string {
  let m: Record<string, unknown>;
  try {
    m = JSON.parse(identifier) as Record<string, unknown>;
  } catch {
    return JSON.stringify(identifier);
  }
  let out = JSON.stringify(typeof m.manager === 'string' ? m.manager : '');
  if (typeof m.subresource === 'string' && m.subresource) out += ` with subresource ${JSON.stringify(m.subresource)}`;
  if (m.operation === 'Update') {
    out += ` using ${typeof m.apiVersion === 'string' ? m.apiVersion : ''}`;
    if (typeof m.time === 'string') out += ` at ${m.time}`;
  }
  return out;
}

function conflictMessage(conflicts: Conflict[]): string {
  if (conflicts.length === 1) {
    return `Apply failed with 1 conflict: conflict with ${printManager(conflicts[0].manager)}: ${pathString(conflicts[0].path)}`;
  }
  const byManager = new Map<string, FieldPath[]>();
  for (const c of conflicts) byManager.set(c.manager, [...(byManager.get(c.manager) ?? []), c.path]);
  const lines: string[] = [];
  for (const manager of [...byManager.keys()].sort()) {
    lines.push(`conflicts with ${printManager(manager)}:`);
    for (const p of byManager.get(manager)!) lines.push(`- ${pathString(p)}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}
