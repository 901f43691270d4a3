/** A group version whose serving the runtime configuration decides. */
export interface ApiVersionSpec {
  groupVersion: string;
  /** alpha versions are off unless enabled; beta and GA on unless disabled. */
  stage: 'alpha' | 'beta' | 'ga';
  /** Set false for a beta version off unless enabled (upstream: beta APIs new since 1.24 are off by default, KEP-3136). */
  enabledByDefault?: boolean;
}

/** The group versions Plinth serves only when the runtime configuration enables them (upstream: alpha APIs are off by default). */
export const GATED_API_VERSIONS: readonly ApiVersionSpec[] = [
  { groupVersion: 'admissionregistration.k8s.io/v1alpha1', stage: 'alpha' },
  // Beta versions new since 1.24 are off by default upstream: enabled by name or with api/beta.
  { groupVersion: 'admissionregistration.k8s.io/v1beta1', stage: 'beta', enabledByDefault: false },
  { groupVersion: 'coordination.k8s.io/v1beta1', stage: 'beta', enabledByDefault: false },
  { groupVersion: 'storagemigration.k8s.io/v1beta1', stage: 'beta', enabledByDefault: false },
  // Plinth's own API: v1alpha1 off unless enabled, v1beta1 (the same Tenant objects) on unless disabled.
  { groupVersion: 'tenancy.plinth.dev/v1alpha1', stage: 'alpha' },
  { groupVersion: 'tenancy.plinth.dev/v1beta1', stage: 'beta' },
];

/** A runtime configuration that cannot be used; start-up stops with this message. */
export class RuntimeConfigError extends Error {}

/**
 * Upstream's `--runtime-config` (`group/version=true|false`, `api/all`,
 * `api/alpha`, `api/beta`, `api/ga`; a bare `group/version` means true),
 * for the group versions in `known`; later settings win. Versions Plinth
 * does not gate are refused by name.
 */
export class RuntimeConfig {
  private readonly enabled = new Map<string, boolean>();

  constructor(setting: string, known: readonly ApiVersionSpec[]) {
    for (const v of known) this.enabled.set(v.groupVersion, v.stage !== 'alpha' && v.enabledByDefault !== false);
    for (const part of setting.split(',').map((p) => p.trim()).filter(Boolean)) {
      const eq = part.indexOf('=');
      const key = (eq < 0 ? part : part.slice(0, eq)).trim();
      const raw = eq < 0 ? 'true' : part.slice(eq + 1).trim();
      if (raw !== 'true' && raw !== 'false') throw new RuntimeConfigError(`invalid value ${key}=${raw}: must be true or false`);
      const on = raw === 'true';
      if (key.startsWith('api/')) {
        const stage = key.slice('api/'.length);
        if (!['all', 'alpha', 'beta', 'ga'].includes(stage)) throw new RuntimeConfigError(`unknown api group version ${key}`);
        for (const v of known) if (stage === 'all' || v.stage === stage) this.enabled.set(v.groupVersion, on);
        continue;
      }
      if (!this.enabled.has(key)) throw new RuntimeConfigError(`runtime-config: unknown group version ${key} (gated versions: ${known.map((k) => k.groupVersion).join(', ')})`);
      this.enabled.set(key, on);
    }
  }

  /** Whether `groupVersion` is served; versions not gated here always are. */
  serves(groupVersion: string): boolean {
    return this.enabled.get(groupVersion) ?? true;
  }
}
