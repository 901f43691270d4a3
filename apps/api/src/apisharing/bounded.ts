/**
 * At most `max` calls of {@link run} at once; later ones wait their turn in
 * arrival order. The provider's view reads its tenants through one per
 * shard, so that a list or a watch's catch-up across many tenants holds a
 * bounded share of that shard's connection pool (docs/api-sharing.md).
 */
export class Bounded {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly max: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.max) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await fn();
    } finally {
      // The place passes to the next waiter, or is given back.
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

/** One {@link Bounded} per shard, made on first use. */
export function perShard(max: number): (shard: string) => Bounded {
  const gates = new Map<string, Bounded>();
  return (shard) => {
    let g = gates.get(shard);
    if (!g) gates.set(shard, (g = new Bounded(max)));
    return g;
  };
}

/** The reads a request of the view runs at once on one shard: half the shard's pool (at least 1), the other half left to other requests. */
export function viewReadsPerShard(poolSize: number): number {
  return Math.max(1, Math.floor(poolSize / 2));
}
