import { Counter, Gauge, type Registry } from 'prom-client';

/**
 * A gauge whose value is read from `read` each time /metrics is scraped
 * (a size, a revision, a flag kept elsewhere). Registers it; returns it.
 */
export function scrapedGauge(registers: Registry[], name: string, help: string, read: () => number): Gauge {
  return new Gauge({
    name,
    help,
    registers,
    collect() {
      this.set(read());
    },
  });
}

/**
 * A counter kept elsewhere as a plain running total (`read`), exposed as a
 * Prometheus counter that catches up when scraped. A total that went back
 * (its owner was replaced) is taken as the new base, never as a decrease.
 * Registers it; returns it.
 */
export function scrapedCounter(registers: Registry[], name: string, help: string, read: () => number): Counter {
  let seen = 0;
  return new Counter({
    name,
    help,
    registers,
    collect() {
      const now = read();
      if (now > seen) this.inc(now - seen);
      seen = now;
    },
  });
}
