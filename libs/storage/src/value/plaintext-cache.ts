import { LRUCache } from 'lru-cache';
import { type ObjectKey, objectKeyId } from '../object-key.js';
import type { ValueTransformer } from './value-transformer.js';

/** One remembered decryption: the stored value, who read it, what it read. */
interface Entry {
  sealed: string;
  reader: ValueTransformer;
  plaintext: string;
  tenant: string;
}

/** The default bound of the process's cache, in bytes of its strings. */
export const DEFAULT_PLAINTEXT_CACHE_BYTES = 64 * 1024 * 1024;

/** What the cache did so far (counters since the process started) and holds now. */
export interface PlaintextCacheStats {
  hits: number;
  misses: number;
  entries: number;
  bytes: number;
}

/**
 * The plaintexts of encrypted values read lately, by object: reading the
 * same stored value of an object again (a Secret read over and over, as
 * controllers and kubelets do) skips base64 and decryption, which cost an
 * encrypted get about a third more server CPU than a plain one.
 *
 * An entry answers only for the very stored value it was decrypted from
 * (the whole ciphertext is compared, so a new revision, a re-encryption or
 * a value copied from elsewhere misses) and only while the same transformer
 * reads it: a reloaded configuration builds new transformers, so a value
 * whose key was removed is decrypted again and fails as upstream's does.
 * Deleting a tenant forgets its entries before its keys are destroyed
 * (see {@link forgetTenant}). Bounded by bytes, least recently used first.
 * It holds only what the watch cache and responses already hold in memory:
 * plaintexts of objects this process served.
 */
export class PlaintextCache {
  private readonly entries: LRUCache<string, Entry> | undefined;
  private hits = 0;
  private misses = 0;

  /** `maxBytes` 0 turns the cache off: every read decrypts. */
  constructor(maxBytes: number) {
    this.entries =
      maxBytes > 0
        ? new LRUCache<string, Entry>({
            maxSize: maxBytes,
            // A stored value is prefix and base64, ASCII: V8 keeps it one byte a character. The plaintext (JSON) may hold
            // any character and so is counted at two, as V8 then keeps the whole string.
            sizeCalculation: (e, k) => e.sealed.length + 2 * (e.plaintext.length + k.length) + 64,
          })
        : undefined;
  }

  /** The plaintext `reader` decrypted from exactly `sealed` for `key`, or undefined. Marks the entry used. */
  get(key: ObjectKey, sealed: string, reader: ValueTransformer): string | undefined {
    if (!this.entries) return undefined;
    const e = this.entries.get(objectKeyId(key));
    if (e && e.sealed === sealed && e.reader === reader) {
      this.hits++;
      return e.plaintext;
    }
    this.misses++;
    return undefined;
  }

  /** Remembers that `reader` decrypted `sealed` of `key` into `plaintext`, replacing the object's previous entry. */
  set(key: ObjectKey, sealed: string, reader: ValueTransformer, plaintext: string): void {
    this.entries?.set(objectKeyId(key), { sealed, reader, plaintext, tenant: key.tenant });
  }

  /** Forgets every entry of `tenant` (its deletion: crypto-erasure must not leave plaintexts to serve). */
  forgetTenant(tenant: string): void {
    if (!this.entries) return;
    for (const [k, e] of this.entries.entries()) if (e.tenant === tenant) this.entries.delete(k);
  }

  /** How many entries are held (tests, metrics). */
  get size(): number {
    return this.entries?.size ?? 0;
  }

  /** Hits and misses so far, entries and bytes held now. */
  stats(): PlaintextCacheStats {
    return { hits: this.hits, misses: this.misses, entries: this.size, bytes: this.entries?.calculatedSize ?? 0 };
  }
}
