import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

/**
 * The console's build: Preact through esbuild's automatic JSX runtime (no
 * Babel), every asset a hashed file under dist/console/assets (served
 * immutable by apps/api/src/console), no inline script or style so the
 * strict Content-Security-Policy holds, and no module-preload polyfill
 * (an inline helper browsers with modules do not need).
 */
export default defineConfig({
  root: here,
  base: '/console/',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: fileURLToPath(new URL('../../dist/console', import.meta.url)),
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
    reportCompressedSize: false,
  },
  logLevel: 'warn',
});
