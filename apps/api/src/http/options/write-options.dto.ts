import { IsIn, IsOptional, MaxLength } from 'class-validator';
import { ApiError } from '@plinth/apimachinery';
import { validateQuery } from './query-validation.js';

/** Query parameters of create, update and patch (CreateOptions/UpdateOptions/PatchOptions). */
export class WriteOptionsDto {
  @IsOptional() dryRun?: string;
  @IsOptional() @MaxLength(128, { message: 'fieldManager: must be at most 128 characters' }) fieldManager?: string;
  @IsOptional() @IsIn(['Ignore', 'Warn', 'Strict', 'ignore', 'warn', 'strict', ''], {
    message: 'fieldValidation: invalid field validation directive, valid values are Ignore, Warn and Strict',
  })
  fieldValidation?: string;
  @IsOptional() force?: string;
  @IsOptional() pretty?: string;
}

/** Parsed write options. */
export interface WriteOptions {
  dryRun: boolean;
  fieldManager?: string;
  fieldValidation: 'Ignore' | 'Warn' | 'Strict';
}

/**
 * Parses `dryRun` (only `All` is valid; anything else is 400 as upstream),
 * `fieldManager` and `fieldValidation` (default Warn).
 */
export function parseWriteOptions(q: Record<string, string>, repeatedDryRun: string[] = []): WriteOptions {
  const dto = validateQuery(WriteOptionsDto, q);
  const dryRunValues = repeatedDryRun.length > 0 ? repeatedDryRun : dto.dryRun !== undefined ? [dto.dryRun] : [];
  for (const v of dryRunValues) {
    if (v !== 'All') {
      throw ApiError.badRequest(`Invalid dryRun: Unsupported value: "${v}": supported values: "All"`);
    }
  }
  const fv = (dto.fieldValidation ?? '').toLowerCase();
  return {
    dryRun: dryRunValues.length > 0,
    fieldManager: dto.fieldManager,
    fieldValidation: fv === 'ignore' ? 'Ignore' : fv === 'strict' ? 'Strict' : 'Warn',
  };
}
