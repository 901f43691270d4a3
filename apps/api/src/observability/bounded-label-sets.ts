/** The label value every label set past the bound is reported under. */
export const OTHER_LABEL = '_other';

/**
 * Bounds the label sets that carry names tenants choose (webhooks, CRDs,
 * policies), so /metrics cannot grow without limit: the first `max`
 * distinct sets keep their values, every later one is reported with each
 * of its values `_other`.
 */
export class BoundedLabelSets {
  private readonly seen = new Set<string>();

  constructor(private readonly max: number) {}

  /** `values` itself while it is among the first `max` distinct sets, else the same keys with `_other`. Does not mutate `values`. */
  bound<T extends Record<string, string>>(values: T): T {
    const key = Object.values(values).join('\u0000');
    if (this.seen.has(key)) return values;
    if (this.seen.size < this.max) {
      this.seen.add(key);
      return values;
    }
    return Object.fromEntries(Object.keys(values).map((k) => [k, OTHER_LABEL])) as T;
  }
}
