#!/usr/bin/env node
// Writes dist/node_modules/@plinth/<name>/ for every `@plinth/*` entry of
// tsconfig.json's `paths`: a package.json and an index.js re-exporting the
// compiled library index. tsc resolves `@plinth/*` through `paths` but does
// not rewrite them in emitted ESM; Node resolves bare specifiers by walking
// up to a node_modules folder, and every compiled file (apps, libs, test,
// bench) sits under dist/, so dist/node_modules/@plinth is found at run time
// by `npm start`, the tests, the benches and the Docker image alike.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tsconfig = JSON.parse(readFileSync(path.join(root, 'tsconfig.json'), 'utf8'));
const scope = path.join(root, 'dist', 'node_modules', '@plinth');
rmSync(scope, { recursive: true, force: true });

for (const [name, [target]] of Object.entries(tsconfig.compilerOptions.paths)) {
  if (!name.startsWith('@plinth/')) continue;
  const dir = path.join(root, 'dist', 'node_modules', name);
  const compiled = path.join(root, 'dist', target.replace(/\.ts$/, '.js'));
  const rel = path.relative(dir, compiled).split(path.sep).join('/');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, 'package.json'),
    `${JSON.stringify({ name, private: true, type: 'module', exports: './index.js' }, null, 2)}\n`,
  );
  writeFileSync(path.join(dir, 'index.js'), `export * from '${rel}';\n`);
}
