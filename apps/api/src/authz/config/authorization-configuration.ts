import { statSync } from 'node:fs';
import path from 'node:path';
import { fieldErrorMessage, isDNS1123Subdomain } from '@plinth/apimachinery';
import { parse as parseYaml } from 'yaml';
import { FieldErrorList as Errors, validateWebhookSettings, type WebhookSettings } from '../../kinds/authorization/authorization-webhook-settings.js';
import { readWebhookKubeconfig, type WebhookConnection } from './webhook-kubeconfig.js';

/** A webhook authorizer of the file, validated: its connection read from its kubeconfig, its matchConditions compiled. */
export interface WebhookAuthorizerConfig extends WebhookSettings {
  name: string;
  connection: WebhookConnection;
}

/** One authorizer of the chain, in file order. */
export type AuthorizerEntry = { type: 'RBAC' | 'AlwaysAllow' | 'AlwaysDeny'; name: string } | { type: 'Webhook'; name: string; webhook: WebhookAuthorizerConfig };

/** Thrown for an unusable file: the message lists every field error (`authorizers[0].webhook.timeout: Required value`). */
export class AuthorizationConfigError extends Error {}

const API_VERSIONS = ['apiserver.config.k8s.io/v1', 'apiserver.config.k8s.io/v1beta1', 'apiserver.config.k8s.io/v1alpha1'];
/** Upstream's authorization modes (kube-apiserver's AuthorizationModeChoices), the types the file may name. */
const KNOWN_TYPES = ['ABAC', 'AlwaysAllow', 'AlwaysDeny', 'Node', 'RBAC', 'Webhook'];
/** Modes upstream knows that Plinth does not serve: no kubelets (Node), no policy file (ABAC). */
const UNSERVED: Record<string, string> = {
  Node: 'Plinth serves no nodes (no kubelets, pods or volumes): the Node authorizer has nothing to decide; remove it',
  ABAC: 'Plinth does not serve ABAC (deprecated upstream); use RBAC or a Webhook authorizer',
};

type Raw = Record<string, unknown>;

function isObject(v: unknown): v is Raw {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** connectionInfo: KubeConfigFile only (an absolute path to a regular file, read now). */
function connection(raw: unknown, at: string, errs: Errors): WebhookConnection | undefined {
  const info = isObject(raw) ? raw : {};
  const type = info.type;
  const fileAt = `${at}.connectionInfo.kubeConfigFile`;
  if (type === undefined || type === '') {
    errs.required(`${at}.connectionInfo.type`);
    return undefined;
  }
  if (type === 'InClusterConfig') {
    errs.invalid(`${at}.connectionInfo.type`, type, 'Plinth is the API server, not a workload of one: give the webhook a kubeconfig with type KubeConfigFile');
    return undefined;
  }
  if (type !== 'KubeConfigFile') {
    errs.notSupported(`${at}.connectionInfo.type`, type, ['InClusterConfig', 'KubeConfigFile']);
    return undefined;
  }
  const file = info.kubeConfigFile;
  if (typeof file !== 'string' || file === '') {
    errs.required(fileAt);
    return undefined;
  }
  if (!path.isAbsolute(file)) {
    errs.invalid(fileAt, file, 'must be an absolute path');
    return undefined;
  }
  try {
    if (!statSync(file).isFile()) {
      errs.invalid(fileAt, file, 'must be a regular file');
      return undefined;
    }
    return readWebhookKubeconfig(file);
  } catch (err) {
    errs.invalid(fileAt, file, `error loading file: ${(err as Error).message}`);
    return undefined;
  }
}

function webhookEntry(name: string, raw: Raw, at: string, errs: Errors): WebhookAuthorizerConfig | undefined {
  const settings = validateWebhookSettings(raw, at, errs.list);
  const conn = connection(raw.connectionInfo, at, errs);
  return settings && conn ? { name, ...settings, connection: conn } : undefined;
}

/** Checks one authorizer's type and name (upstream's rules, and kube-apiserver's: a non-webhook's name is its type in lower case). */
function entryHeader(r: Raw, at: string, seenTypes: Set<string>, seenNames: Set<string>, errs: Errors): { type: string; name: string } | undefined {
  const type = typeof r.type === 'string' ? r.type : '';
  if (!type) {
    errs.required(`${at}.type`);
    return undefined;
  }
  if (!KNOWN_TYPES.includes(type)) {
    errs.notSupported(`${at}.type`, type, KNOWN_TYPES);
    return undefined;
  }
  if (UNSERVED[type]) {
    errs.invalid(`${at}.type`, type, UNSERVED[type]);
    return undefined;
  }
  if (seenTypes.has(type) && type !== 'Webhook') {
    errs.duplicate(`${at}.type`, type);
    return undefined;
  }
  seenTypes.add(type);
  const name = typeof r.name === 'string' ? r.name : '';
  if (!name) errs.required(`${at}.name`);
  else if (seenNames.has(name)) errs.duplicate(`${at}.name`, name);
  else {
    const bad = isDNS1123Subdomain(name);
    if (bad.length > 0) errs.invalid(`${at}.name`, name, `authorizer name is invalid: ${bad.join(', ')}`);
    else if (type !== 'Webhook' && name !== type.toLowerCase()) errs.invalid(`${at}.name`, name, `expected name ${type.toLowerCase()} for authorizer ${type}`);
  }
  seenNames.add(name);
  return { type, name };
}

/**
 * Parses and validates upstream's structured authorization configuration
 * (`apiserver.config.k8s.io/v1` or `v1beta1` `AuthorizationConfiguration`,
 * YAML or JSON), as kube-apiserver's ValidateAuthorizationConfiguration
 * and LoadAndValidateData: the ordered authorizers, webhooks' fields, their
 * kubeconfig files (read now) and CEL matchConditions (compiled now).
 * `requiredTypes` (on reload: the non-webhook types the running chain
 * started with) must all still be there. Throws AuthorizationConfigError
 * listing every field error. Reads the kubeconfig files it names.
 */
export function parseAuthorizationConfiguration(text: string, requiredTypes: ReadonlySet<string> = new Set()): AuthorizerEntry[] {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new AuthorizationConfigError(`not valid YAML or JSON: ${(err as Error).message}`);
  }
  if (!isObject(raw) || !API_VERSIONS.includes(String(raw.apiVersion)) || raw.kind !== 'AuthorizationConfiguration') {
    const got = isObject(raw) ? `${String(raw.apiVersion)}, Kind=${String(raw.kind)}` : typeof raw;
    throw new AuthorizationConfigError(`expected kind AuthorizationConfiguration in ${API_VERSIONS.join(', ')}; got ${got}`);
  }
  const errs = new Errors();
  const list = Array.isArray(raw.authorizers) ? raw.authorizers : [];
  if (list.length === 0) errs.required('authorizers', 'at least one authorization mode must be defined');
  const seenTypes = new Set<string>();
  const seenNames = new Set<string>();
  const entries: AuthorizerEntry[] = [];
  list.forEach((item, i) => {
    const at = `authorizers[${i}]`;
    const r = isObject(item) ? item : {};
    const header = entryHeader(r, at, seenTypes, seenNames, errs);
    if (!header) return;
    if (header.type === 'Webhook') {
      if (!isObject(r.webhook)) return errs.required(`${at}.webhook`, 'required when type=Webhook');
      const webhook = webhookEntry(header.name, r.webhook, `${at}.webhook`, errs);
      if (webhook) entries.push({ type: 'Webhook', name: header.name, webhook });
      return;
    }
    if (r.webhook !== undefined && r.webhook !== null) errs.invalid(`${at}.webhook`, 'non-null', 'may only be specified when type=Webhook');
    entries.push({ type: header.type as 'RBAC' | 'AlwaysAllow' | 'AlwaysDeny', name: header.name });
  });
  const missing = [...requiredTypes].filter((t) => !seenTypes.has(t)).sort();
  if (missing.length > 0) errs.list.push({ type: 'FieldValueRequired', field: '', detail: `missing required types: [${missing.join(' ')}]` });
  if (errs.list.length > 0) {
    const lines = errs.list.map((e) => (e.field ? fieldErrorMessage(e) : (e.detail ?? '')));
    throw new AuthorizationConfigError(lines.length === 1 ? lines[0] : `[${lines.join(', ')}]`);
  }
  return entries;
}
