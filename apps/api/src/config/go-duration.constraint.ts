import { type ValidationArguments, ValidatorConstraint, type ValidatorConstraintInterface } from 'class-validator';
import { parseGoDuration } from '@plinth/apimachinery';

/** A class-validator constraint: the value is a Go duration (`1h`, `90m`, `1h30m0s`) longer than zero. */
@ValidatorConstraint({ name: 'positiveGoDuration' })
export class PositiveGoDuration implements ValidatorConstraintInterface {
  /** True for a string time.ParseDuration reads as more than zero. */
  validate(value: unknown): boolean {
    if (typeof value !== 'string') return false;
    try {
      return parseGoDuration(value) > 0;
    } catch {
      return false;
    }
  }

  /** Names the variable and the form expected. */
  defaultMessage(args: ValidationArguments): string {
    return `${args.property} must be a Go duration longer than zero (for example 1h, 30m or 90s)`;
  }
}
