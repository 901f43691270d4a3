#!/usr/bin/env node
// Deletes compiled files under dist/ whose TypeScript source no longer exists
// (a file was moved or removed), so the test runner does not pick up stale
// *.spec.js / *.e2e.js and nothing imports an outdated copy. Leaves
// dist/node_modules (written by write-package-aliases.mjs) alone.
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');

/** Removes stale outputs below `dir`; returns true when `dir` ends up empty. */
function prune(dir) {
  let empty = true;
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) {
      if (dir === dist && name === 'node_modules') {
        empty = false;
        continue;
      }
      if (prune(p)) rmSync(p, { recursive: true });
      else empty = false;
      continue;
    }
    const m = /^(.*)\.js(\.map)?$/.exec(name);
    const source = m && path.join(root, path.relative(dist, dir), `${m[1]}.ts`);
    if (source && !existsSync(source)) rmSync(p);
    else empty = false;
  }
  return empty;
}

if (existsSync(dist)) prune(dist);
