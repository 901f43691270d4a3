import type { Environment } from '@marcbachmann/cel-js';
import { isDeepStrictEqual } from 'node:util';

/**
 * Kubernetes' lists library (`isSorted`, `sum`, `min`, `max`, `indexOf`,
 * `lastIndexOf`) and cel-go's sets extension (`sets.contains`,
 * `sets.equivalent`, `sets.intersects`).
 */

function compare(a: unknown, b: unknown): number {
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) {
    if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
    const x = Number(a);
    const y = Number(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (a instanceof Date && b instanceof Date) return a.getTime() - b.getTime();
  if (a && b && typeof a === 'object' && typeof b === 'object' && 'compareTo' in a && typeof (a as { compareTo: unknown }).compareTo === 'function') {
    return (a as { compareTo(o: unknown): number }).compareTo(b);
  }
  throw new Error('no such overload');
}

function celEquals(a: unknown, b: unknown): boolean {
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) return Number(a) === Number(b);
  return isDeepStrictEqual(a, b);
}

function sum(list: unknown[]): unknown {
  if (list.length === 0) return 0n;
  if (typeof list[0] === 'bigint') {
    let total = 0n;
    for (const v of list) total += v as bigint;
    if (total > (1n << 63n) - 1n || total < -(1n << 63n)) throw new Error('integer overflow');
    return total;
  }
  if (typeof list[0] === 'number') return list.reduce<number>((t, v) => t + Number(v), 0);
  const first = list[0] as { add?: (o: unknown) => unknown };
  if (first && typeof first.add === 'function') return list.slice(1).reduce((t, v) => (t as { add(o: unknown): unknown }).add(v), first);
  throw new Error('no such overload');
}

function extreme(list: unknown[], sign: number): unknown {
  if (list.length === 0) throw new Error('min called on empty list'.replace('min', sign < 0 ? 'min' : 'max'));
  let best = list[0];
  for (const v of list.slice(1)) if (compare(v, best) * sign > 0) best = v;
  return best;
}

/** Registers the list and set functions on `env`. */
export function registerListsLibrary(env: Environment): void {
  env.registerFunction('list.isSorted(): bool', (l: unknown[]) => l.every((v, i) => i === 0 || compare(l[i - 1], v) <= 0));
  env.registerFunction('list.sum(): dyn', (l: unknown[]) => sum(l));
  env.registerFunction('list.min(): dyn', (l: unknown[]) => extreme(l, -1));
  env.registerFunction('list.max(): dyn', (l: unknown[]) => extreme(l, 1));
  env.registerFunction('list.indexOf(dyn): int', (l: unknown[], v: unknown) => BigInt(l.findIndex((x) => celEquals(x, v))));
  env.registerFunction('list.lastIndexOf(dyn): int', (l: unknown[], v: unknown) => {
    for (let i = l.length - 1; i >= 0; i--) if (celEquals(l[i], v)) return BigInt(i);
    return -1n;
  });
  class SetsNamespace {}
  env.registerType('SetsNamespace', SetsNamespace);
  env.registerConstant('sets', 'SetsNamespace', new SetsNamespace());
  const has = (l: unknown[], v: unknown) => l.some((x) => celEquals(x, v));
  env.registerFunction('SetsNamespace.contains(list, list): bool', (_n: unknown, a: unknown[], b: unknown[]) => b.every((v) => has(a, v)));
  env.registerFunction('SetsNamespace.equivalent(list, list): bool', (_n: unknown, a: unknown[], b: unknown[]) =>
    b.every((v) => has(a, v)) && a.every((v) => has(b, v)),
  );
  env.registerFunction('SetsNamespace.intersects(list, list): bool', (_n: unknown, a: unknown[], b: unknown[]) => b.some((v) => has(a, v)));
}
