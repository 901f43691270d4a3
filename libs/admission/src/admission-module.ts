import type { AdmissionAttributes, AdmissionOperation } from './admission-attributes.js';
import type { ReinvocationContext } from './reinvocation-context.js';

/** What the chain collects from modules besides accept/deny. */
export interface AdmissionResult {
  /** Texts for `Warning: 299` headers. */
  warnings: string[];
  /**
   * Per-request reinvocation state; the chain sets it during the mutating
   * phase (callers need not). Absent outside the chain.
   */
  reinvocation?: ReinvocationContext;
  /**
   * Audit annotations modules add (`key` → value), for the audit log; absent
   * when the caller does not collect them.
   */
  auditAnnotations?: Record<string, string>;
}

/**
 * One admission module. It declares which operations it handles; it may
 * mutate (`admit`), validate (`validate`), or both. A module rejects a
 * request by throwing; the error is handed to the client as is, so modules
 * throw errors the HTTP layer understands (Status-carrying errors).
 */
export interface AdmissionModule {
  /** Unique; a duplicate fails start-up. */
  readonly name: string;
  handles(operation: AdmissionOperation): boolean;
  /** Mutating phase: may change `attrs.object`. */
  admit?(attrs: AdmissionAttributes, result: AdmissionResult): Promise<void>;
  /** Validating phase: must not change anything. */
  validate?(attrs: AdmissionAttributes, result: AdmissionResult): Promise<void>;
}
