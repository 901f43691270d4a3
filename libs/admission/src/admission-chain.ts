import type { AdmissionAttributes } from './admission-attributes.js';
import type { AdmissionModule, AdmissionResult } from './admission-module.js';

/**
 * The ordered admission modules. `admit` runs every mutating module in
 * order; `validate` runs every validating module. The caller runs schema
 * validation between the two, as upstream does.
 */
export class AdmissionChain {
  private readonly modules: AdmissionModule[];

  /** Throws when two modules share a name. */
  constructor(modules: AdmissionModule[]) {
    const seen = new Set<string>();
    for (const m of modules) {
      if (seen.has(m.name)) throw new Error(`duplicate admission module "${m.name}"`);
      seen.add(m.name);
    }
    this.modules = [...modules];
  }

  /** Module names in order, for the start-up log. */
  names(): string[] {
    return this.modules.map((m) => m.name);
  }

  /** Runs the mutating phase; may change `attrs.object`. Throws the first rejection. */
  async admit(attrs: AdmissionAttributes, result: AdmissionResult): Promise<void> {
    for (const m of this.modules) {
      if (m.admit && m.handles(attrs.operation)) await m.admit(attrs, result);
    }
  }

  /** Runs the validating phase. Throws the first rejection. */
  async validate(attrs: AdmissionAttributes, result: AdmissionResult): Promise<void> {
    for (const m of this.modules) {
      if (m.validate && m.handles(attrs.operation)) await m.validate(attrs, result);
    }
  }
}
