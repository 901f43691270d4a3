import {
  AesCbcTransformer,
  AesGcmTransformer,
  IDENTITY,
  type PrefixTransformer,
  PrefixTransformers,
  type ResourceTransformer,
  SecretboxTransformer,
  type ValueTransformer,
} from '@plinth/storage';
import { type EncryptionConfiguration, type EncryptionKey, type ProviderConfiguration, readEncryptionConfigFile } from './encryption-config.parser.js';
import { aggregateFieldErrors, parseGroupResource, validateEncryptionConfiguration } from './encryption-config.validation.js';
import { KMS_V1_REFUSED } from './kms/kms-config.js';
import type { KmsRegistry } from './kms/kms-registry.js';
import type { KmsV2Provider } from './kms/kms-v2.provider.js';

/** The transformers of a configuration, by `group/resource` rule (`/secrets`, `apps/*`, `*\/*`). */
export type TransformerRules = Map<string, ResourceTransformer>;

function ruleKey(group: string, resource: string): string {
  return `${group}/${resource}`;
}

/** `"secrets"`, `"*."`, `"*.*"`: a group/resource as upstream's messages print it. */
function grYamlString(group: string, resource: string): string {
  return group === '' ? (resource === '*' ? '*.' : resource) : `${resource}.${group}`;
}

/** One key per named prefix (`<name>:`), as upstream's aesPrefixTransformer and secretboxPrefixTransformer build them. */
function keyed(keys: EncryptionKey[], noMatch: string, make: (secret: Buffer) => ValueTransformer): PrefixTransformers {
  return new PrefixTransformers(
    noMatch,
    keys.map((k) => ({ prefix: Buffer.from(`${k.name}:`), transformer: make(Buffer.from(k.secret, 'base64')) })),
  );
}

/** The prefix transformer of one provider entry (validated: exactly one provider); kms ones are collected in `kms`. */
function providerTransformer(p: ProviderConfiguration, registry: KmsRegistry | undefined, kms: Map<string, KmsV2Provider>): PrefixTransformer {
  if (p.kms) {
    if (p.kms.apiVersion !== 'v2') throw new Error(KMS_V1_REFUSED);
    if (!registry) throw new Error(`kms provider ${p.kms.name}: KMS v2 is not available in this process`);
    const provider = registry.provider(p.kms);
    kms.set(p.kms.name, provider);
    return { prefix: provider.prefix, transformer: provider };
  }
  if (p.aesgcm) {
    return { prefix: Buffer.from('k8s:enc:aesgcm:v1:'), transformer: keyed(p.aesgcm.keys, 'no matching key was found for the provided AES transformer', (k) => new AesGcmTransformer(k)) };
  }
  if (p.aescbc) {
    return { prefix: Buffer.from('k8s:enc:aescbc:v1:'), transformer: keyed(p.aescbc.keys, 'no matching key was found for the provided AES transformer', (k) => new AesCbcTransformer(k)) };
  }
  if (p.secretbox) {
    return {
      prefix: Buffer.from('k8s:enc:secretbox:v1:'),
      transformer: keyed(p.secretbox.keys, 'no matching key was found for the provided Secretbox transformer', (k) => new SecretboxTransformer(k)),
    };
  }
  return { prefix: Buffer.alloc(0), transformer: IDENTITY };
}

/**
 * The transformers of a validated configuration, as upstream's
 * getTransformerOverrides builds them: each resource rule gets the
 * providers of every entry naming it, in order; a rule masked by an
 * earlier `*.group` or `*.*` rule is an error; a kms provider must be v2
 * (KMS v1 is refused, as upstream without its feature gate). Throws an
 * Error with upstream's message. Pure apart from creating kms providers in
 * `registry` (collected by name in `kms`).
 */
export function buildTransformerRules(config: EncryptionConfiguration, registry?: KmsRegistry, kms = new Map<string, KmsV2Provider>()): TransformerRules {
  const lists = new Map<string, PrefixTransformer[]>();
  for (const entry of config.resources) {
    const transformers = entry.providers.map((p) => providerTransformer(p, registry, kms));
    for (const res of entry.resources) {
      const gr = parseGroupResource(res);
      for (const [g, r] of [[gr.group, '*'], ['*', '*']] as const) {
        if (lists.has(ruleKey(g, r))) {
          throw new Error(`resource "${grYamlString(gr.group, gr.resource)}" is masked by earlier rule "${grYamlString(g, r)}"`);
        }
      }
      const key = ruleKey(gr.group, gr.resource);
      lists.set(key, [...(lists.get(key) ?? []), ...transformers]);
    }
  }
  const rules: TransformerRules = new Map();
  for (const [key, list] of lists) {
    rules.set(key, { transformer: new PrefixTransformers('no matching prefix found', list), encrypts: list[0].prefix.length > 0 });
  }
  return rules;
}

/**
 * The group and resource of a storage resource: `secrets` (core),
 * `apps/deployments` (built-in groups), `widgets.example.com` (custom
 * resources, plural first).
 */
export function storageGroupResource(storage: string): { group: string; resource: string } {
  const s = storage.startsWith('/') ? storage.slice(1) : storage;
  const slash = s.indexOf('/');
  if (slash >= 0) return { group: s.slice(0, slash), resource: s.slice(slash + 1) };
  return parseGroupResource(s);
}

/** The rule of a storage resource, as upstream's transformerFromOverrides looks it up: exact, then `*.group`, then `*.*`. */
export function ruleFor(rules: TransformerRules, storage: string): ResourceTransformer | undefined {
  const { group, resource } = storageGroupResource(storage);
  return rules.get(ruleKey(group, resource)) ?? rules.get(ruleKey(group, '*')) ?? rules.get(ruleKey('*', '*'));
}

/** A loaded configuration: its rules, the hash of the file they came from, its KMS v2 providers by name. */
export interface LoadedEncryption {
  rules: TransformerRules;
  hash: string;
  kms: Map<string, KmsV2Provider>;
}

/**
 * Reads, decodes, validates and builds the configuration file at `path`,
 * with upstream's messages (`error while parsing file: …`, `error while
 * building transformers: …`); kms providers come from `registry` (not
 * started: see KmsRegistry.settle). Throws an Error when anything is wrong,
 * a kms endpoint with no socket included.
 */
export function loadEncryptionConfig(path: string, registry?: KmsRegistry): LoadedEncryption {
  let parsed;
  try {
    parsed = readEncryptionConfigFile(path);
    const errors = validateEncryptionConfiguration(parsed.config);
    if (errors.length > 0) throw new Error(aggregateFieldErrors(errors));
  } catch (err) {
    throw new Error(`error while parsing file: ${(err as Error).message}`);
  }
  try {
    const kms = new Map<string, KmsV2Provider>();
    return { rules: buildTransformerRules(parsed.config, registry, kms), hash: parsed.hash, kms };
  } catch (err) {
    throw new Error(`error while building transformers: ${(err as Error).message}`);
  }
}
