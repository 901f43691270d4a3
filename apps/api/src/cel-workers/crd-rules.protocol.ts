import type { FieldError, StructuralSchema } from '@plinth/apimachinery';

/**
 * What the main thread and the CRD rule workers exchange. A task names its
 * schema by key; the schema itself travels only when the worker said it
 * does not have it (`missing`), so a worker compiles each schema once.
 */

/** One object's rules to evaluate. */
export interface CrdRulesTask {
  key: string;
  /** Sent after the worker answered `missing` for `key`. */
  schema?: StructuralSchema;
  obj: unknown;
  old?: unknown;
}

/** The worker's answer: the violations and how long evaluation took (ms), or that it needs the schema. */
export type CrdRulesAnswer = { missing: true } | { errs: FieldError[]; ms: number };
