import type { AdmissionAttributes } from './admission-attributes.js';
import type { AdmissionModule, AdmissionResult } from './admission-module.js';
import type { AdmissionTracer } from './admission-tracer.js';
import { ReinvocationContext } from './reinvocation-context.js';

/** The attributes of an admission step's span (the tracer adds the tenant's shard). */
function stepAttributes(plugin: string, attrs: AdmissionAttributes): Record<string, string> {
  return { tenant: attrs.tenant, plugin, operation: attrs.operation, resource: attrs.resource.resource, subresource: attrs.subresource };
}

/**
 * The ordered admission modules, as upstream's admission chain. `admit`
 * runs every mutating module in the configured order (and, when a module
 * asks for it, a second time — upstream's reinvocation); `validate` runs
 * every validating module in the same order. The caller runs schema
 * validation and defaulting between the two phases, as upstream does.
 */
export class AdmissionChain {
  private readonly modules: AdmissionModule[];

  /**
   * Keeps `modules` in the given order. Throws when two modules share a name (fails start-up).
   * `tracer`: one span per module run (`Admit <name>`, `Validate <name>`); unset, none.
   */
  constructor(
    modules: AdmissionModule[],
    private readonly tracer?: AdmissionTracer,
  ) {
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

  /** The names of the modules taking part in each phase, in order (for the start-up log). */
  phases(): { mutating: string[]; validating: string[] } {
    return {
      mutating: this.modules.filter((m) => m.admit).map((m) => m.name),
      validating: this.modules.filter((m) => m.validate).map((m) => m.name),
    };
  }

  /**
   * Runs the mutating phase; may change (or replace) `attrs.object`. When a
   * module set `reinvocation.shouldReinvoke`, every mutating module runs once
   * more with `reinvocation.isReinvoke` true (modules decide themselves what
   * to do again). Throws the first rejection.
   */
  async admit(attrs: AdmissionAttributes, result: AdmissionResult): Promise<void> {
    const reinvocation = result.reinvocation ?? new ReinvocationContext();
    const r: AdmissionResult = { warnings: result.warnings, reinvocation };
    await this.admitOnce(attrs, r);
    if (!reinvocation.shouldReinvoke) return;
    reinvocation.isReinvoke = true;
    await this.admitOnce(attrs, r);
  }

  private async admitOnce(attrs: AdmissionAttributes, result: AdmissionResult): Promise<void> {
    for (const m of this.modules) {
      if (!m.admit || !m.handles(attrs.operation)) continue;
      if (this.tracer) await this.tracer.step(`Admit ${m.name}`, stepAttributes(m.name, attrs), () => m.admit!(attrs, result));
      else await m.admit(attrs, result);
    }
  }

  /** Runs the validating phase. Throws the first rejection. */
  async validate(attrs: AdmissionAttributes, result: AdmissionResult): Promise<void> {
    for (const m of this.modules) {
      if (!m.validate || !m.handles(attrs.operation)) continue;
      if (this.tracer) await this.tracer.step(`Validate ${m.name}`, stepAttributes(m.name, attrs), () => m.validate!(attrs, result));
      else await m.validate(attrs, result);
    }
  }
}
