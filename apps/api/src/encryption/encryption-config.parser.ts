import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { decodeKmsConfiguration, type KmsConfiguration } from './kms/kms-config.js';

/** One named key of an aescbc, aesgcm or secretbox provider (`secret`: base64). */
export interface EncryptionKey {
  name: string;
  secret: string;
}

/** One entry of `providers`: exactly one of its fields is set (validation says so otherwise). */
export interface ProviderConfiguration {
  aesgcm?: { keys: EncryptionKey[] };
  aescbc?: { keys: EncryptionKey[] };
  secretbox?: { keys: EncryptionKey[] };
  identity?: Record<string, never>;
  kms?: KmsConfiguration;
}

/** One entry of `resources`: the resources it names and their providers, the first one writing. */
export interface ResourceConfiguration {
  resources: string[];
  providers: ProviderConfiguration[];
}

/** An `apiserver.config.k8s.io/v1` EncryptionConfiguration, decoded. */
export interface EncryptionConfiguration {
  resources: ResourceConfiguration[];
}

const API_VERSION = 'apiserver.config.k8s.io/v1';
const KIND = 'EncryptionConfiguration';

/** The fields each level may have (upstream decodes strictly: any other is an error). */
const KNOWN: Record<string, readonly string[]> = {
  root: ['apiVersion', 'kind', 'resources'],
  resource: ['resources', 'providers'],
  provider: ['aesgcm', 'aescbc', 'secretbox', 'identity', 'kms'],
  keyed: ['keys'],
  key: ['name', 'secret'],
  identity: [],
};

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Go's json name of a value's type, for decoding errors. */
function jsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'object' : typeof v;
}

/** Throws upstream's strict-decoding error for any field of `obj` not in `known`. */
function checkFields(obj: Record<string, unknown>, known: readonly string[], path: string): void {
  for (const k of Object.keys(obj)) {
    if (!known.includes(k)) throw new Error(`strict decoding error: unknown field "${path ? `${path}.` : ''}${k}"`);
  }
}

/** `value` as a list of `T` decoded by `each` (null or missing: empty), or Go's json type error. */
function list<T>(value: unknown, path: string, goType: string, each: (v: unknown, p: string) => T): T[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new Error(`json: cannot unmarshal ${jsonType(value)} into Go struct field ${path} of type ${goType}`);
  return value.map((v, i) => each(v, `${path}[${i}]`));
}

function str(value: unknown, path: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new Error(`json: cannot unmarshal ${jsonType(value)} into Go struct field ${path} of type string`);
  return value;
}

function object(value: unknown, path: string, goType: string): Record<string, unknown> {
  if (!isObject(value)) throw new Error(`json: cannot unmarshal ${jsonType(value)} into Go struct field ${path} of type ${goType}`);
  return value;
}

function decodeKeyed(value: unknown, path: string): { keys: EncryptionKey[] } {
  const o = object(value, path, 'v1.AESConfiguration');
  checkFields(o, KNOWN.keyed, path);
  return {
    keys: list(o.keys, `${path}.keys`, '[]v1.Key', (k, p) => {
      const ko = object(k, p, 'v1.Key');
      checkFields(ko, KNOWN.key, p);
      return { name: str(ko.name, `${p}.name`), secret: str(ko.secret, `${p}.secret`) };
    }),
  };
}

function decodeProvider(value: unknown, path: string): ProviderConfiguration {
  const o = object(value, path, 'v1.ProviderConfiguration');
  checkFields(o, KNOWN.provider, path);
  const p: ProviderConfiguration = {};
  for (const name of ['aesgcm', 'aescbc', 'secretbox'] as const) if (o[name] !== undefined && o[name] !== null) p[name] = decodeKeyed(o[name], `${path}.${name}`);
  if (o.identity !== undefined && o.identity !== null) {
    checkFields(object(o.identity, `${path}.identity`, 'v1.IdentityConfiguration'), KNOWN.identity, `${path}.identity`);
    p.identity = {};
  }
  if (o.kms !== undefined && o.kms !== null) {
    p.kms = decodeKmsConfiguration(object(o.kms, `${path}.kms`, 'v1.KMSConfiguration'), `${path}.kms`);
  }
  return p;
}

/**
 * Decodes an EncryptionConfiguration (YAML or JSON) as upstream's strict
 * decoder does: `apiVersion` and `kind` must name it, unknown and
 * duplicate fields are errors. Throws an Error with upstream's message.
 * Pure; does not validate (see validateEncryptionConfiguration).
 */
export function decodeEncryptionConfiguration(text: string): EncryptionConfiguration {
  let doc: unknown;
  try {
    doc = parseYaml(text, { uniqueKeys: true, prettyErrors: false });
  } catch (err) {
    throw new Error(`strict decoding error: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!isObject(doc)) throw new Error(`couldn't get version/kind; json parse error: the document is not an object`);
  const apiVersion = typeof doc.apiVersion === 'string' ? doc.apiVersion : '';
  const kind = typeof doc.kind === 'string' ? doc.kind : '';
  if (!kind) throw new Error(`Object 'Kind' is missing in '${JSON.stringify(doc)}'`);
  if (apiVersion !== API_VERSION || kind !== KIND) throw new Error(`no kind "${kind}" is registered for version "${apiVersion}"`);
  checkFields(doc, KNOWN.root, '');
  return {
    resources: list(doc.resources, 'resources', '[]v1.ResourceConfiguration', (r, p) => {
      const ro = object(r, p, 'v1.ResourceConfiguration');
      checkFields(ro, KNOWN.resource, p);
      return {
        resources: list(ro.resources, `${p}.resources`, '[]string', (s, sp) => str(s, sp)),
        providers: list(ro.providers, `${p}.providers`, '[]v1.ProviderConfiguration', decodeProvider),
      };
    }),
  };
}

/** Upstream's content hash of the file: `sha256:` and the hex sha256 of its bytes. */
export function encryptionConfigHash(data: Buffer): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

/**
 * Reads the file at `path` as upstream's loadConfig does, with its messages:
 * unreadable, empty, not decodable. Returns the decoded configuration and
 * the content hash; validation is the caller's (it has the transformers to
 * build). Throws an Error.
 */
export function readEncryptionConfigFile(path: string): { config: EncryptionConfiguration; hash: string } {
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch (err) {
    throw new Error(`error while loading file: error reading encryption provider configuration file "${path}": ${(err as Error).message}`);
  }
  if (data.length === 0) throw new Error(`error while loading file: encryption provider configuration file "${path}" is empty`);
  try {
    return { config: decodeEncryptionConfiguration(data.toString('utf8')), hash: encryptionConfigHash(data) };
  } catch (err) {
    throw new Error(`error decoding encryption provider configuration file "${path}": ${(err as Error).message}`);
  }
}
