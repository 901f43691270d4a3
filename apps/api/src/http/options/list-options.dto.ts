import { IsIn, IsOptional, Matches } from 'class-validator';
import { ApiError } from '@plinth/apimachinery';
import { type FieldError, fieldErrors } from '@plinth/apimachinery';
import { BOOL_PATTERN, parseBool, validateQuery } from './query-validation.js';

/** ListOptions query parameters of list and watch requests, as sent. */
export class ListOptionsDto {
  @IsOptional() labelSelector?: string;
  @IsOptional() fieldSelector?: string;
  @IsOptional() @Matches(/^\d+$/, { message: 'limit: must be a non-negative integer' }) limit?: string;
  @IsOptional() continue?: string;
  @IsOptional() resourceVersion?: string;
  @IsOptional() @IsIn(['', 'Exact', 'NotOlderThan'], { message: 'resourceVersionMatch: unsupported value' }) resourceVersionMatch?: string;
  @IsOptional() @Matches(BOOL_PATTERN, { message: 'watch: must be a boolean' }) watch?: string;
  @IsOptional() @Matches(BOOL_PATTERN, { message: 'allowWatchBookmarks: must be a boolean' }) allowWatchBookmarks?: string;
  @IsOptional() @Matches(BOOL_PATTERN, { message: 'sendInitialEvents: must be a boolean' }) sendInitialEvents?: string;
  @IsOptional() @Matches(/^\d+$/, { message: 'timeoutSeconds: must be a non-negative integer' }) timeoutSeconds?: string;
}

/** Parsed, validated list/watch options. */
export interface ListOptions {
  labelSelector: string;
  fieldSelector: string;
  limit: number;
  continueToken: string;
  resourceVersion: string;
  resourceVersionMatch: '' | 'Exact' | 'NotOlderThan';
  watch: boolean;
  allowWatchBookmarks: boolean;
  sendInitialEvents: boolean | undefined;
  timeoutSeconds: number | undefined;
}

function listMatchErrors(o: ListOptions): FieldError[] {
  const errs: FieldError[] = [];
  const m = o.resourceVersionMatch;
  if (m) {
    if (!o.resourceVersion) errs.push(fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    if (o.continueToken) errs.push(fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    if (m === 'Exact' && o.resourceVersion === '0') {
      errs.push(fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
    }
  }
  if (o.sendInitialEvents !== undefined) errs.push(fieldErrors.forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  return errs;
}

function watchMatchErrors(o: ListOptions): FieldError[] {
  const errs: FieldError[] = [];
  const m = o.resourceVersionMatch;
  if (o.sendInitialEvents !== undefined && m !== 'NotOlderThan') {
    errs.push(fieldErrors.forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
  }
  if (m) {
    if (o.sendInitialEvents === undefined) {
      errs.push(fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
    }
    if (m !== 'NotOlderThan') errs.push(fieldErrors.notSupported('resourceVersionMatch', m, ['NotOlderThan']));
    if (o.continueToken) errs.push(fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
  }
  return errs;
}

/**
 * Parses and validates list or watch options. Throws ApiError 400 for
 * unparseable values and 422 Invalid (kind ListOptions, group meta.k8s.io)
 * for the combinations upstream forbids, with upstream's messages.
 */
export function parseListOptions(q: Record<string, string>, forceWatch = false): ListOptions {
  if (q.resourceVersionMatch !== undefined && !['', 'Exact', 'NotOlderThan'].includes(q.resourceVersionMatch)) {
    throw ApiError.invalid({ group: 'meta.k8s.io', kind: 'ListOptions', name: '' }, [
      fieldErrors.notSupported('resourceVersionMatch', q.resourceVersionMatch, ['Exact', 'NotOlderThan', '']),
    ]);
  }
  const dto = validateQuery(ListOptionsDto, q);
  const o: ListOptions = {
    labelSelector: dto.labelSelector ?? '',
    fieldSelector: dto.fieldSelector ?? '',
    limit: dto.limit ? Number(dto.limit) : 0,
    continueToken: dto.continue ?? '',
    resourceVersion: dto.resourceVersion ?? '',
    resourceVersionMatch: (dto.resourceVersionMatch ?? '') as ListOptions['resourceVersionMatch'],
    watch: forceWatch || parseBool(dto.watch) === true,
    allowWatchBookmarks: parseBool(dto.allowWatchBookmarks) === true,
    sendInitialEvents: parseBool(dto.sendInitialEvents),
    timeoutSeconds: dto.timeoutSeconds ? Number(dto.timeoutSeconds) : undefined,
  };
  const errs = o.watch ? watchMatchErrors(o) : listMatchErrors(o);
  if (errs.length > 0) throw ApiError.invalid({ group: 'meta.k8s.io', kind: 'ListOptions', name: '' }, errs);
  return o;
}
