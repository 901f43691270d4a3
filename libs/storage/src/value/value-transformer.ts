import { StorageError } from '../storage-error.js';

/**
 * Transformers of stored values, as k8s.io/apiserver/pkg/storage/value has
 * them: bytes in, bytes out, with the object's storage key as authenticated
 * data. Pure and synchronous (node:crypto and tweetnacl are), so every read
 * path decrypts without an extra await per row.
 */

/** What reading a stored value gives. */
export interface ReadValue {
  data: Buffer;
  /** True when the value should be rewritten: it was not read by the first (writing) transformer. */
  stale: boolean;
}

/**
 * Who a value belongs to, for transformers that key by tenant (KMS v2's
 * data key per tenant). Optional: the others ignore it.
 */
export interface TransformContext {
  tenant: string;
}

/**
 * Upstream's value.Transformer. Both directions throw an Error (upstream's
 * message) when they cannot transform; a transformer whose key must first
 * be fetched (KMS v2 on a cache miss) throws {@link DataKeyNeeded}, which
 * {@link withDataKeys} awaits and retries.
 */
export interface ValueTransformer {
  /** The plaintext of `data` as stored; `aad` must be what it was written with (AEAD modes check it). */
  fromStorage(data: Buffer, aad: Buffer, ctx?: TransformContext): ReadValue;
  /** The stored form of `data`. Never mutates `data`. */
  toStorage(data: Buffer, aad: Buffer, ctx?: TransformContext): Buffer;
}

/** A transformer and the prefix its stored values start with (empty for identity). */
export interface PrefixTransformer {
  prefix: Buffer;
  transformer: ValueTransformer;
}

/**
 * Upstream's NewPrefixTransformers: writes with the first transformer and
 * prepends its prefix; reads with the first whose prefix the value starts
 * with, trying the next matching one when it fails (an unprefixed
 * transformer's failure is skipped, as upstream does for identity).
 * Every failure aggregated as upstream's errors.NewAggregate; `err` when
 * nothing matched.
 */
export class PrefixTransformers implements ValueTransformer {
  readonly transformers: readonly PrefixTransformer[];

  constructor(
    private readonly err: string,
    transformers: PrefixTransformer[],
  ) {
    if (transformers.length === 0) throw new Error('PrefixTransformers needs at least one transformer');
    this.transformers = transformers;
  }

  /** The prefix the next write gets. */
  get writePrefix(): Buffer {
    return this.transformers[0].prefix;
  }

  /** Whether a value with no prefix at all (stored in plain) is read: an identity transformer is among them. */
  get readsUnprefixed(): boolean {
    return this.transformers.some((t) => t.prefix.length === 0);
  }

  /** The error of a read that no transformer matched. */
  get noMatchError(): string {
    return this.err;
  }

  fromStorage(data: Buffer, aad: Buffer, ctx?: TransformContext): ReadValue {
    const errs: string[] = [];
    for (const [i, t] of this.transformers.entries()) {
      if (!startsWith(data, t.prefix)) continue;
      try {
        const read = t.transformer.fromStorage(data.subarray(t.prefix.length), aad, ctx);
        return { data: read.data, stale: read.stale || i !== 0 };
      } catch (err) {
        // A key still to fetch is not a failure of this transformer: the caller awaits it and retries.
        if (err instanceof DataKeyNeeded) throw err;
        if (t.prefix.length === 0) continue;
        errs.push(errorMessage(err));
      }
    }
    throw new Error(errs.length > 0 ? aggregate(errs) : this.err);
  }

  toStorage(data: Buffer, aad: Buffer, ctx?: TransformContext): Buffer {
    const first = this.transformers[0];
    return Buffer.concat([first.prefix, first.transformer.toStorage(data, aad, ctx)]);
  }
}

/**
 * Thrown by a transformer whose data key is not in memory (KMS v2: the
 * tenant's seed, fetched from the key store and unwrapped by the plugin).
 * `ready` settles once the key was fetched (or rejects with why it cannot
 * be: a StorageError); the fetch started when this was thrown. A
 * StorageError Unavailable (503) itself, so a caller that does not await
 * it answers "retry" and the next request finds the key.
 */
export class DataKeyNeeded extends StorageError {
  constructor(
    message: string,
    readonly ready: Promise<void>,
  ) {
    super('Unavailable', message);
    // Nobody may await it (a sweep that skips the object): no unhandled rejection.
    ready.catch(() => undefined);
  }
}

/**
 * Runs `fn` (a synchronous transformation, or anything that calls one) and,
 * each time a transformer throws {@link DataKeyNeeded}, awaits the key and
 * runs it again: the one place where a cache miss of a data key becomes an
 * await. Rejects with the key's own error when it cannot be fetched (a
 * tenant crypto-erased, the KMS plugin down), or with whatever `fn` throws.
 * `fn` must be safe to run again (it only transforms).
 */
export async function withDataKeys<T>(fn: () => T): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return fn();
    } catch (err) {
      // A few rounds cover a key evicted between the fetch and the retry; beyond that, answer 503.
      if (!(err instanceof DataKeyNeeded) || attempt >= 4) throw err;
      await err.ready;
    }
  }
}

/** True when `data` begins with `prefix` (always for an empty prefix). */
export function startsWith(data: Buffer, prefix: Buffer): boolean {
  return prefix.length === 0 || (data.length >= prefix.length && data.subarray(0, prefix.length).equals(prefix));
}

/** The message of anything thrown. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Upstream's errors.NewAggregate(...).Error(): one message as it is, several as `[a, b]`, repeats once. */
export function aggregate(messages: string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? unique[0] : `[${unique.join(', ')}]`;
}
