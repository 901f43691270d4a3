import type { KubeObject } from '@plinth/apimachinery';
import type { TableColumn, TableConvertor } from '../registry/resource-definition.js';
import { objectMetaSchema } from '../schema/object-meta.schema.js';
import { ageCell } from '../table/human-duration.js';
import type { CrdColumn } from '../kinds/customresourcedefinition/crd-types.js';
import { evaluateJsonPath, type JsonPathStep, parseJsonPath, printJsonPathValue } from '../table/jsonpath.js';

/**
 * Table output of custom resources from `additionalPrinterColumns`
 * (apiextensions-apiserver tableconvertor): a Name column, then one column
 * per entry; without entries, upstream's default `Age` column over
 * `.metadata.creationTimestamp`. `date` cells are rendered as ages.
 */

const NAME_DESCRIPTION = objectMetaSchema.properties?.name?.description ?? '';
const CREATED_DESCRIPTION = objectMetaSchema.properties?.creationTimestamp?.description ?? '';

const DEFAULT_COLUMNS: CrdColumn[] = [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: CREATED_DESCRIPTION }];

function cell(type: string, value: unknown, now: Date): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'string':
      return printJsonPathValue(value);
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date':
      if (typeof value !== 'string') return null;
      return Number.isNaN(Date.parse(value)) ? '<invalid>' : ageCell(value, now);
    default:
      return null;
  }
}

/** The TableConvertor of one CRD version's columns. Unparsable paths yield empty cells, as upstream. */
export function customResourceTable(columns: CrdColumn[] | null | undefined): TableConvertor {
  const cols = columns && columns.length > 0 ? columns : DEFAULT_COLUMNS;
  const headers: TableColumn[] = [{ name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0 }];
  const paths: Array<JsonPathStep[] | undefined> = [];
  for (const c of cols) {
    headers.push({
      name: c.name ?? '',
      type: c.type ?? 'string',
      format: c.format ?? '',
      description: c.description || `Custom resource definition column (in JSONPath format): ${c.jsonPath ?? ''}`,
      priority: c.priority ?? 0,
    });
    try {
      paths.push(parseJsonPath(c.jsonPath ?? ''));
    } catch {
      paths.push(undefined);
    }
  }
  return {
    columns: headers,
    cells: (obj: KubeObject, now: Date) => [
      obj.metadata.name,
      ...paths.map((p, i) => {
        if (!p) return null;
        const results = evaluateJsonPath(p, obj);
        return results.length === 0 ? null : cell(headers[i + 1].type, results[0], now);
      }),
    ],
  };
}
