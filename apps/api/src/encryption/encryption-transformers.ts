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

/** The prefix transformer of one provider entry (validated: exactly one provider, not kms). */
function providerTransformer(p: ProviderConfiguration): PrefixTransformer {
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
 * earlier `*.group` or `*.*` rule is an error. Throws an Error with
 * upstream's message. Pure.
 */
export function buildTransformerRules(config: EncryptionConfiguration): TransformerRules {
  const lists = new Map<string, PrefixTransformer[]>();
  for (const entry of config.resources) {
    const transformers = entry.providers.map(providerTransformer);
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

/** A loaded configuration: its rules and the hash of the file they came from. */
export interface LoadedEncryption {
  rules: TransformerRules;
  hash: string;
}

/**
 * Reads, decodes, validates and builds the configuration file at `path`,
 * with upstream's messages (`error while parsing file: …`, `error while
 * building transformers: …`). Throws an Error when anything is wrong.
 */
export function loadEncryptionConfig(path: string): LoadedEncryption {
  let parsed;
  try {
    parsed = readEncryptionConfigFile(path);
    const errors = validateEncryptionConfiguration(parsed.config);
    if (errors.length > 0) throw new Error(aggregateFieldErrors(errors));
  } catch (err) {
    throw new Error(`error while parsing file: ${(err as Error).message}`);
  }
  try {
    return { rules: buildTransformerRules(parsed.config), hash: parsed.hash };
  } catch (err) {
    throw new Error(`error while building transformers: ${(err as Error).message}`);
  }
}
