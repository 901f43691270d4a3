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

/** `/version`: a Kubernetes 1.32-compatible version.Info; Plinth's own version rides in gitVersion's build metadata. */
export const PLINTH_VERSION = {
  major: '1',
  minor: '32',
  gitVersion: `v1.32.0+plinth-${own}`,
  gitCommit: 'plinth',
  gitTreeState: 'clean',
  buildDate: '2026-11-22T00:00:00Z',
  goVersion: `node${process.versions.node}`,
  compiler: 'plinth',
  platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
};
