import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** One file of the built console, held in memory. */
export interface ConsoleAsset {
  body: Buffer;
  contentType: string;
  /** Hashed file names never change content: cached for a year; index.html is revalidated every time. */
  immutable: boolean;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};

/** Where `vite build` writes the console (apps/console/vite.config.ts): dist/console beside dist/apps. */
export function defaultConsoleDir(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../console');
}

/**
 * Reads the built console from `dir` into a map from URL path
 * (`/console/index.html`, `/console/assets/…`) to its file; an empty map
 * when the console was not built. Only these paths are ever served, so a
 * request cannot name any other file (no path is joined from the URL).
 */
export function loadConsoleAssets(dir: string): Map<string, ConsoleAsset> {
  const out = new Map<string, ConsoleAsset>();
  if (!existsSync(path.join(dir, 'index.html'))) return out;
  const walk = (sub: string) => {
    for (const entry of readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(rel);
      else {
        const ext = path.extname(entry.name);
        out.set(`/console/${rel}`, {
          body: readFileSync(path.join(dir, rel)),
          contentType: TYPES[ext] ?? 'application/octet-stream',
          immutable: rel.startsWith('assets/'),
        });
      }
    }
  };
  walk('');
  return out;
}
