/** A parsed semantic version (major.minor.patch, pre-release identifiers). */
export interface SemanticVersion {
  major: number;
  minor: number;
  patch: number;
  pre: string[];
}

const STRICT = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

/** Strict SemVer 2.0 (blang/semver's Parse, which upstream's validation uses); undefined when `s` is not one. */
export function parseSemver(s: string): SemanticVersion | undefined {
  const m = STRICT.exec(s);
  if (!m) return undefined;
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]), pre: m[4] ? m[4].split('.') : [] };
}

/**
 * blang/semver's ParseTolerant, which the election uses: surrounding spaces
 * and a leading `v` are dropped and a missing minor or patch is 0
 * (`1.35` is 1.35.0). Undefined when still not a version.
 */
export function parseSemverTolerant(s: string): SemanticVersion | undefined {
  let v = s.trim().replace(/^v/, '');
  const core = v.split(/[-+]/, 1)[0];
  const parts = core.split('.');
  if (parts.length < 3 && parts.length > 0) v = [...parts, ...Array(3 - parts.length).fill('0')].join('.') + v.slice(core.length);
  return parseSemver(v);
}

function comparePre(a: string[], b: string[]): number {
  if (a.length === 0 || b.length === 0) return Math.sign(b.length - a.length); // a release is above its pre-releases
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const an = /^\d+$/.test(a[i]);
    const bn = /^\d+$/.test(b[i]);
    if (an && bn && Number(a[i]) !== Number(b[i])) return Number(a[i]) < Number(b[i]) ? -1 : 1;
    if (an !== bn) return an ? -1 : 1;
    if (!an && a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return Math.sign(a.length - b.length);
}

/** -1, 0 or 1 as `a` is below, equal to or above `b` (SemVer precedence). */
export function compareSemver(a: SemanticVersion, b: SemanticVersion): number {
  for (const k of ['major', 'minor', 'patch'] as const) if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
  return comparePre(a.pre, b.pre);
}

/** The zero version, which unparseable versions count as in the election. */
export const ZERO_VERSION: SemanticVersion = { major: 0, minor: 0, patch: 0, pre: [] };
