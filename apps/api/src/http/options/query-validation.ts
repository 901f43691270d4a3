import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { ApiError } from '@plinth/apimachinery';

/** Query strings as Fastify parses them: a repeated key gives an array; the first value counts. */
export type RawQuery = Record<string, string | string[] | undefined>;

/** Flattens a raw query to first values. Never throws. */
export function firstValues(q: RawQuery): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(q ?? {})) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? (v[0] ?? '') : v;
  }
  return out;
}

/**
 * Validates a query against a class-validator DTO and returns the instance.
 * Throws ApiError 400 BadRequest naming each bad parameter, as upstream's
 * parameter codec does for unparseable values.
 */
export function validateQuery<T extends object>(cls: new () => T, q: Record<string, string>): T {
  // Most requests carry no query at all; whether an empty one is valid depends on the DTO alone, so it is checked once per DTO.
  let isEmpty = true;
  for (const _ in q) {
    isEmpty = false;
    break;
  }
  // The query DTOs declare no transformers, so an empty query's instance is a bare one (plainToInstance costs ~2% of a create).
  if (isEmpty && EMPTY_QUERY_VALID.has(cls)) return new cls();
  const dto = plainToInstance(cls, q);
  const errors = validateSync(dto, { forbidUnknownValues: false });
  if (errors.length > 0) {
    const msgs = errors.flatMap((e) => Object.values(e.constraints ?? {}));
    throw ApiError.badRequest(msgs.join('; '));
  }
  if (isEmpty) EMPTY_QUERY_VALID.add(cls);
  return dto;
}

/** The DTO classes an empty query has been validated against without errors (see {@link validateQuery}). */
const EMPTY_QUERY_VALID = new WeakSet<new () => object>();

/** Parses a query boolean as Go's strconv.ParseBool; undefined when absent. */
export function parseBool(v: string | undefined): boolean | undefined {
  if (v === undefined) return undefined;
  return ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(v);
}

export const BOOL_PATTERN = /^(1|t|T|true|TRUE|True|0|f|F|false|FALSE|False)$/;
