/**
 * Preloaded into a benchmark's server (`--import`, with `--expose-gc`): a
 * SIGUSR2 runs a full garbage collection, so memory read right after it is
 * what the server holds, not what it has not collected yet. Benchmarks only.
 */
process.on('SIGUSR2', () => {
  (globalThis as { gc?: () => void }).gc?.();
});
