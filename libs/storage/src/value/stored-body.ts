import type { ObjectKey } from '../object-key.js';
import { StorageError } from '../storage-error.js';
import { corruptObjectError } from './corrupt-object.js';
import { IDENTITY } from './identity-transformer.js';
import { DEFAULT_PLAINTEXT_CACHE_BYTES, PlaintextCache, type PlaintextCacheStats } from './plaintext-cache.js';
import { DataKeyNeeded, errorMessage, PrefixTransformers, type ValueTransformer } from './value-transformer.js';

/**
 * The field of an encrypted body that holds upstream's stored value: the
 * provider's prefix as text (`k8s:enc:aesgcm:v1:<key name>:`), then the
 * ciphertext in base64 (a jsonb column holds text, not bytes; base64 has
 * no `:`, so the prefix ends at the last one).
 */
export const ENCRYPTED_FIELD = 'k8s:enc';

/**
 * The metadata fields an encrypted body keeps readable beside its
 * ciphertext, because SQL reads them: labels (label selectors, migration
 * 0011's GIN index), uid (garbage collection by owner uid, its hashed
 * index), ownerReferences (dependents of an owner, migration 0007's index),
 * finalizers and deletionTimestamp (the sweeps of objects being deleted,
 * namespaces being emptied). Name and namespace are columns. As etcd keys
 * stay readable upstream, these are identifiers, not contents: annotations
 * (kubectl's last-applied-configuration holds the whole object) and every
 * other field are encrypted.
 */
export const READABLE_METADATA = ['labels', 'uid', 'ownerReferences', 'finalizers', 'deletionTimestamp'] as const;

/** How one storage resource is transformed (apps build it from the EncryptionConfiguration). */
export interface ResourceTransformer {
  /** The resource's providers, the first one writing. */
  transformer: PrefixTransformers;
  /** False when the first provider is identity: bodies are then stored as they are. */
  encrypts: boolean;
}

/** One transformation, for metrics and logs. */
export interface TransformationEvent {
  key: ObjectKey;
  type: 'to_storage' | 'from_storage';
  /** The provider's prefix (`k8s:enc:aesgcm:v1:`), `identity`, or `unknown` when no provider matched. */
  prefix: string;
  /** Set when the transformation failed. */
  error?: string;
  /** A successful to_storage's stored value ({@link ENCRYPTED_FIELD}), observed synchronously right after the provider wrote it. */
  sealed?: string;
}

/** The process's encryption configuration as storage sees it. */
export interface ResourceTransformers {
  /** The providers of a storage resource (`secrets`, `apps/deployments`, `widgets.example.com`); undefined: stored as it is. */
  forResource(resource: string): ResourceTransformer | undefined;
  /** Told of every transformation of a configured resource and every failure. Must not throw. */
  observe?(event: TransformationEvent): void;
  /**
   * Fetches ahead the data keys that reading `sealed` (a stored
   * {@link ENCRYPTED_FIELD} value of `key`) would need, or that a write of
   * `key` would need when `sealed` is undefined. Returns undefined when they
   * are in memory (the hot path: no promise), else a promise that settles
   * once fetched (it may reject: the transformation then fails as it would
   * have). Optional: transformers whose keys are all in memory have none.
   */
  prepare?(key: ObjectKey, sealed?: string): Promise<void> | undefined;
  /**
   * True when `sealed`, though written by the resource's first provider,
   * is stale all the same (KMS v2: written under another key_id than the
   * plugin's current one). Optional; must not throw.
   */
  isStale?(key: ObjectKey, sealed: string): boolean;
}

let installed: ResourceTransformers | undefined;

/**
 * Makes `transformers` the encryption of every repository of this process
 * (upstream: one configuration per kube-apiserver), replacing the one
 * installed; returns the function that restores the previous one. Process
 * wide on purpose: every repository, however it was built, reads and
 * writes through it. Undefined: nothing is encrypted (values written
 * encrypted earlier then fail to read, as with upstream's identity).
 */
export function installResourceTransformers(transformers: ResourceTransformers | undefined): () => void {
  const previous = installed;
  installed = transformers;
  return () => {
    if (installed === transformers) installed = previous;
  };
}

/** True when `body` is an encrypted body (see {@link ENCRYPTED_FIELD}). */
export function isEncryptedBody(body: Record<string, unknown>): boolean {
  return typeof body[ENCRYPTED_FIELD] === 'string';
}

/**
 * The authenticated data of an object's stored value (aesgcm binds its
 * ciphertext to it): its tenant and key, so a value copied into another
 * object's row, or another tenant's, does not decrypt.
 */
export function authenticatedData(key: ObjectKey): Buffer {
  return Buffer.from(`/${key.tenant}/${key.resource}/${key.namespace}/${key.name}`);
}

/** The object's key as upstream's messages name it: `/registry/secrets/<namespace>/<name>`, `/registry/<group>/<resource>/…`. */
export function registryKey(key: ObjectKey): string {
  const r = key.resource.startsWith('/') ? key.resource.slice(1) : key.resource;
  const dot = r.indexOf('.');
  const path = r.includes('/') || dot < 0 ? r : `${r.slice(dot + 1)}/${r.slice(0, dot)}`;
  return `/registry/${path}/${key.namespace ? `${key.namespace}/` : ''}${key.name}`;
}

/** {@link writePrefixOf}'s answers, by transformer (a configuration's transformers never change). */
const writePrefixes = new WeakMap<ValueTransformer, string>();

/** The full prefix the next write of `t` gets: the provider's and its first key's. */
function writePrefixOf(t: ValueTransformer): string {
  if (!(t instanceof PrefixTransformers)) return '';
  let prefix = writePrefixes.get(t);
  if (prefix === undefined) {
    prefix = t.writePrefix.toString() + writePrefixOf(t.transformers[0].transformer);
    writePrefixes.set(t, prefix);
  }
  return prefix;
}

/** The readable metadata of an encrypted body (see {@link READABLE_METADATA}). */
function readableMetadata(metadata: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!metadata || typeof metadata !== 'object') return out;
  for (const f of READABLE_METADATA) {
    const v = (metadata as Record<string, unknown>)[f];
    if (v !== undefined) out[f] = v;
  }
  return out;
}

/**
 * The form of `body` to store for `key`: encrypted by the resource's first
 * provider into `{"k8s:enc": …, "metadata": {readable fields}}`, or `body`
 * itself when no provider encrypts it. Does not mutate `body`. Throws when
 * the provider fails (then nothing is written). Remembers the plaintext of
 * the value it returns in the process's plaintext cache.
 */
export function sealBody(key: ObjectKey, body: Record<string, unknown>): Record<string, unknown> {
  const rt = installed?.forResource(key.resource);
  if (!rt?.encrypts) return body;
  const prefix = writePrefixOf(rt.transformer);
  let stored: Buffer;
  const plaintext = JSON.stringify(body);
  try {
    stored = rt.transformer.toStorage(Buffer.from(plaintext), authenticatedData(key), { tenant: key.tenant });
  } catch (err) {
    if (err instanceof StorageError) throw err;
    installed?.observe?.({ key, type: 'to_storage', prefix: providerPrefix(prefix), error: errorMessage(err) });
    throw new StorageError('Internal', errorMessage(err));
  }
  const sealed = prefix + stored.subarray(prefix.length).toString('base64');
  installed?.observe?.({ key, type: 'to_storage', prefix: providerPrefix(prefix), sealed });
  // The change feed's read of this very value, and the gets that follow, need not decrypt it.
  plaintexts.set(key, sealed, rt.transformer, plaintext);
  return { [ENCRYPTED_FIELD]: sealed, metadata: readableMetadata(body.metadata) };
}

/** `k8s:enc:aesgcm:v1:` of a full prefix, the label upstream's metrics use; `identity` for none. */
function providerPrefix(prefix: string): string {
  let label = providerPrefixes.get(prefix);
  if (label === undefined) {
    const parts = prefix.split(':');
    label = parts.length >= 5 ? `${parts.slice(0, 4).join(':')}:` : 'identity';
    // Prefixes come from the configuration's key names: few, but bounded all the same.
    if (providerPrefixes.size >= 256) providerPrefixes.clear();
    providerPrefixes.set(prefix, label);
  }
  return label;
}

/** {@link providerPrefix}'s answers: every read of an encrypted value asks it. */
const providerPrefixes = new Map<string, string>();

/** How {@link openBody} reads. */
export interface OpenOptions {
  /** The failure names the key, as upstream's list does. */
  inList?: boolean;
  /** Answer from, and remember in, the process's plaintext cache (reads of the current state: gets and lists). */
  cached?: boolean;
}

let plaintexts = new PlaintextCache(DEFAULT_PLAINTEXT_CACHE_BYTES);

/** Replaces the process's plaintext cache with an empty one bounded by `maxBytes` (0: off). */
export function configurePlaintextCache(maxBytes: number): void {
  plaintexts = new PlaintextCache(maxBytes);
}

/** Forgets the plaintexts the process holds of `tenant`'s objects (its deletion, before its keys are destroyed). */
export function forgetTenantPlaintexts(tenant: string): void {
  plaintexts.forgetTenant(tenant);
}

/** How many plaintexts the process's cache holds (tests). */
export function plaintextCacheSize(): number {
  return plaintexts.size;
}

/** The process's plaintext cache: hits and misses of cached reads so far, what it holds now (metrics). */
export function plaintextCacheStats(): PlaintextCacheStats {
  return plaintexts.stats();
}

/**
 * The object of a stored body: `stored` itself when it is not encrypted
 * (and may be read in plain), else its decrypted body, with the
 * resourceVersion a read stamped on `stored` carried over. Throws
 * StorageError Internal with upstream's message when it cannot be read: a
 * key no longer configured, a value that does not decrypt, a plain value
 * where every provider expects a prefix. Never mutates `stored`; returns a
 * body of its own (never one the cache holds).
 */
export function openBody(key: ObjectKey, stored: Record<string, unknown>, opts: OpenOptions = {}): Record<string, unknown> {
  const sealed = stored[ENCRYPTED_FIELD];
  if (typeof sealed !== 'string') {
    if (installed === undefined) return stored;
    const rt = installed.forResource(key.resource);
    if (!rt || rt.transformer.readsUnprefixed) return stored;
    throw failure(key, 'unknown', rt.transformer.noMatchError, opts.inList === true);
  }
  const t = installed?.forResource(key.resource)?.transformer ?? IDENTITY;
  const body = JSON.parse((opts.cached && plaintexts.get(key, sealed, t)) || decrypt(key, sealed, t, opts)) as Record<string, unknown>;
  const rv = (stored.metadata as Record<string, unknown> | undefined)?.resourceVersion;
  return rv === undefined ? body : { ...body, metadata: { ...((body.metadata as Record<string, unknown>) ?? {}), resourceVersion: rv } };
}

/** The plaintext JSON of `sealed` as `t` reads it, observed for metrics and remembered when `opts.cached`. */
function decrypt(key: ObjectKey, sealed: string, t: ValueTransformer, opts: OpenOptions): string {
  const colon = sealed.lastIndexOf(':');
  const prefix = sealed.slice(0, colon + 1);
  let plaintext: string;
  try {
    const bytes = Buffer.allocUnsafe(colon + 1 + Math.ceil(((sealed.length - colon - 1) * 3) / 4));
    const n = bytes.write(prefix, 'latin1') + bytes.write(sealed.slice(colon + 1), colon + 1, 'base64');
    plaintext = t.fromStorage(bytes.subarray(0, n), authenticatedData(key), { tenant: key.tenant }).data.toString();
  } catch (err) {
    if (err instanceof DataKeyNeeded) throw err;
    throw failure(key, providerPrefix(prefix), errorMessage(err), opts.inList === true);
  }
  installed?.observe?.({ key, type: 'from_storage', prefix: providerPrefix(prefix) });
  if (opts.cached) plaintexts.set(key, sealed, t, plaintext);
  return plaintext;
}

function failure(key: ObjectKey, prefix: string, message: string, inList: boolean): StorageError {
  installed?.observe?.({ key, type: 'from_storage', prefix, error: message });
  return corruptObjectError(registryKey(key), message, inList);
}

/**
 * True when `stored` was not written by its resource's first provider (an
 * older key or provider, plain where the first encrypts, encrypted where the
 * first is identity): upstream's "stale" read, which an update rewrites
 * even when nothing else changed, so that rewriting every object moves it
 * to the first provider. Pure; decrypts nothing.
 */
export function isStaleBody(key: ObjectKey, stored: Record<string, unknown>): boolean {
  const sealed = stored[ENCRYPTED_FIELD];
  const rt = installed?.forResource(key.resource);
  if (typeof sealed !== 'string') return rt?.encrypts === true;
  return !rt?.encrypts || !sealed.startsWith(writePrefixOf(rt.transformer)) || installed?.isStale?.(key, sealed) === true;
}

/**
 * Fetches ahead the data keys that opening these stored bodies needs (see
 * ResourceTransformers.prepare): undefined when every one is in memory or
 * nothing is encrypted with such keys, else a promise that settles when
 * all were fetched. Never rejects: a key that cannot be fetched fails the
 * read of its own object (openBody), not the others.
 */
export function prepareBodies(entries: Iterable<{ key: ObjectKey; body: Record<string, unknown> | null | undefined }>): Promise<void> | undefined {
  const prepare = installed?.prepare;
  if (!prepare) return undefined;
  let pending: Promise<void>[] | undefined;
  for (const { key, body } of entries) {
    const sealed = body?.[ENCRYPTED_FIELD];
    if (typeof sealed !== 'string') continue;
    const p = prepare.call(installed, key, sealed);
    if (p) (pending ??= []).push(p.catch(() => undefined));
  }
  return pending && Promise.all(pending).then(() => undefined);
}

/**
 * Fetches ahead the data key a write of `key` needs: undefined when it is in
 * memory (or its resource needs none), else a promise; rejects when the key
 * cannot be had (the KMS plugin is down: StorageError Unavailable).
 */
export function prepareWrite(key: ObjectKey): Promise<void> | undefined {
  return installed?.prepare?.(key);
}

/** {@link openBody}, or undefined when the body cannot be read (sweeps over every tenant skip such objects). */
export function openBodyOrSkip(key: ObjectKey, stored: Record<string, unknown>): Record<string, unknown> | undefined {
  try {
    return openBody(key, stored);
  } catch {
    // A key still to fetch is skipped too: its fetch is under way, and the sweep comes back.
    return undefined;
  }
}
