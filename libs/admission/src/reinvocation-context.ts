/**
 * Per-request state of one admission evaluation, as upstream's
 * admission.ReinvocationContext: the chain runs the mutating phase once, and
 * a second time (`isReinvoke`) when a module asked for it. Modules keep
 * their own per-request state under their name in `values`.
 */
export class ReinvocationContext {
  /** True during the second pass of the mutating phase. */
  isReinvoke = false;
  /** Set by a module whose change may require earlier modules to run again. */
  shouldReinvoke = false;
  private readonly values = new Map<string, unknown>();

  /** The state a module stored under `key`, creating it with `init` on first use. */
  state<T>(key: string, init: () => T): T {
    let v = this.values.get(key) as T | undefined;
    if (v === undefined) {
      v = init();
      this.values.set(key, v);
    }
    return v;
  }
}
