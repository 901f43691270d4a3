import { readFileSync } from 'node:fs';

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

const own = packageVersion();

/**
 * `/version`: the version.Info of a Kubernetes 1.35 kube-apiserver at its
 * defaults (1.33+ report the emulation version, equal to the binary's, and
 * the minimum compatibility version, one minor below it); Plinth's own
 * version rides in gitVersion's build metadata. Field order is upstream's.
 */
export const PLINTH_VERSION = {
  major: '1',
  minor: '35',
  emulationMajor: '1',
  emulationMinor: '35',
  minCompatibilityMajor: '1',
  minCompatibilityMinor: '34',
  gitVersion: `v1.35.0+plinth-${own}`,
  gitCommit: 'plinth',
  gitTreeState: 'clean',
  buildDate: '2026-11-22T00:00:00Z',
  goVersion: `node${process.versions.node}`,
  compiler: 'plinth',
  platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
};
