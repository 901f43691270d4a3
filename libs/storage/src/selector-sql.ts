import { type RawBuilder, sql } from 'kysely';

/** The shape of a label requirement the SQL translation understands (see selector/label-selector.ts). */
export interface LabelRequirementLike {
  key: string;
  operator: string;
  values: string[];
}

/** An equality or inequality on metadata.name / metadata.namespace, pushed down to SQL. */
export interface KeyFieldRequirement {
  field: 'metadata.name' | 'metadata.namespace';
  operator: '=' | '!=';
  value: string;
}

function containsLabel(labels: RawBuilder<unknown>, key: string, value: string): RawBuilder<boolean> {
  return sql<boolean>`${labels} @> ${JSON.stringify({ [key]: value })}::jsonb`;
}

/**
 * Translates one label requirement into a boolean SQL expression over the
 * jsonb `labels` expression (never NULL). Equality uses `@>` and existence
 * `?`, both served by the GIN index on objects.labels. Throws on an unknown
 * operator (the parser never produces one).
 */
export function labelRequirementSql(labels: RawBuilder<unknown>, req: LabelRequirementLike): RawBuilder<boolean> {
  switch (req.operator) {
    case 'In':
    case 'Equals':
    case 'DoubleEquals': {
      const alts = req.values.map((v) => containsLabel(labels, req.key, v));
      return alts.length === 1 ? alts[0] : sql<boolean>`(${sql.join(alts, sql` OR `)})`;
    }
    case 'NotIn':
    case 'NotEquals': {
      const alts = req.values.map((v) => containsLabel(labels, req.key, v));
      return sql<boolean>`NOT (${sql.join(alts, sql` OR `)})`;
    }
    case 'Exists':
      return sql<boolean>`(${labels} ? ${req.key})`;
    case 'DoesNotExist':
      return sql<boolean>`NOT (${labels} ? ${req.key})`;
    default:
      throw new Error(`unknown label operator ${req.operator}`);
  }
}

/** ANDs all label and key-field requirements; `TRUE` when there are none. */
export function selectorSql(
  labels: RawBuilder<unknown>,
  namespaceCol: RawBuilder<unknown>,
  nameCol: RawBuilder<unknown>,
  labelReqs: LabelRequirementLike[] = [],
  fieldReqs: KeyFieldRequirement[] = [],
): RawBuilder<boolean> {
  const parts: RawBuilder<boolean>[] = labelReqs.map((r) => labelRequirementSql(labels, r));
  for (const f of fieldReqs) {
    const col = f.field === 'metadata.name' ? nameCol : namespaceCol;
    parts.push(f.operator === '=' ? sql<boolean>`${col} = ${f.value}` : sql<boolean>`${col} <> ${f.value}`);
  }
  return parts.length === 0 ? sql<boolean>`TRUE` : sql<boolean>`(${sql.join(parts, sql` AND `)})`;
}
