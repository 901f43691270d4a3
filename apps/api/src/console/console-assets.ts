import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

/** One file of the built console, held in memory. */
export interface ConsoleAsset {
  body: Buffer;
  contentType: string;
  /** Hashed file names never change content: cached for a year; index.html is revalidated every time. */
  immutable: boolean;
  /** The body gzipped once at start-up, for clients that accept it (text files only; absent when it would not be smaller). */
  gzip?: Buffer;
}

/** `body` gzipped at the highest level when that saves bytes (text types only). */
export function gzipped(body: Buffer, contentType: string): Buffer | undefined {
  if (!/^(text\/|application\/json|image\/svg)/.test(contentType)) return undefined;
  const z = gzipSync(body, { level: 9 });
  return z.length < body.length ? z : undefined;
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
        const body = readFileSync(path.join(dir, rel));
        const contentType = TYPES[path.extname(entry.name)] ?? 'application/octet-stream';
        out.set(`/console/${rel}`, { body, contentType, immutable: rel.startsWith('assets/'), gzip: gzipped(body, contentType) });
      }
    }
  };
  walk('');
  return out;
}
