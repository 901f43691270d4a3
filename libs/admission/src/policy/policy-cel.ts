/**
 * What admission policies need from the server's CEL environment. The
 * application provides it (Plinth's one CEL environment with the
 * Kubernetes libraries and cost limits), so this library carries no CEL
 * implementation of its own.
 */

/** The outcome of one evaluation: a CEL value, or an error text. */
export type PolicyCelResult =
  | { ok: true; value: unknown }
  | {
      ok: false;
      error: string;
      /** True when the shared budget of the evaluation ran out (no further expression may run). */
      outOfBudget: boolean;
    };

/** A compiled expression. */
export interface PolicyCelProgram {
  readonly expression: string;
  /** Evaluates against CEL values (see {@link PolicyCel.fromJson}); charges `budget`. Never throws. */
  evaluate(activation: Record<string, unknown>, budget: PolicyCelBudget): PolicyCelResult;
}

/** The shared cost budget of one policy evaluation (opaque; created by {@link PolicyCel.newBudget}). */
export interface PolicyCelBudget {
  remaining: number;
}

/** The CEL environment of admission policies. */
export interface PolicyCel {
  /**
   * Compiles `expression` with the variables `object`, `oldObject`,
   * `request`, `params`, `namespaceObject`, `variables` (and `authorizer`
   * when `withAuthorizer`). Throws Error whose message is the compile error
   * (`ERROR: <input>:1:5: …`).
   */
  compile(expression: string, withAuthorizer?: boolean): PolicyCelProgram;
  /** A fresh runtime budget (upstream's RuntimeCELCostBudget). */
  newBudget(): PolicyCelBudget;
  /** A JSON value as a CEL value (integers become int). Pure. */
  fromJson(value: unknown): unknown;
  /** A CEL value as JSON. Pure. */
  toJson(value: unknown): unknown;
}
