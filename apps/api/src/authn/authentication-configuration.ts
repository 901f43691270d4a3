import { CelCompileError, type CelProgram, compileCel } from '@plinth/cel';
import { parse as parseYaml } from 'yaml';

/** A claim mapping: a claim (with a prefix) or a CEL expression over `claims`. */
export interface ClaimOrExpression {
  claim?: string;
  prefix?: string;
  expression?: CelProgram;
}

/** One `jwt` entry of upstream's AuthenticationConfiguration, validated and compiled. */
export interface JwtIssuerConfig {
  url: string;
  discoveryURL?: string;
  certificateAuthority?: string;
  audiences: string[];
  claimValidationRules: { claim?: string; requiredValue?: string; expression?: CelProgram; message?: string }[];
  username: ClaimOrExpression;
  groups?: ClaimOrExpression;
  uid?: ClaimOrExpression;
  extra: { key: string; valueExpression: CelProgram }[];
  userValidationRules: { expression: CelProgram; message: string }[];
}

/**
 * The `anonymous` block of the file (upstream's AnonymousAuthConfig):
 * whether requests without credentials are `system:anonymous`, and, when
 * `conditions` is not empty, only on these paths (see anonymous.authenticator.ts).
 */
export interface AnonymousConfig {
  enabled: boolean;
  conditions: { path: string }[];
}

/** The whole file, validated: the JWT issuers in file order and the `anonymous` block when the file has one. */
export interface AuthenticationConfiguration {
  jwt: JwtIssuerConfig[];
  anonymous?: AnonymousConfig;
}

/** Thrown for an unusable configuration file; the message names the field (`jwt[0].issuer.url: …`). */
export class AuthenticationConfigError extends Error {}

const API_VERSIONS = ['apiserver.config.k8s.io/v1', 'apiserver.config.k8s.io/v1beta1', 'apiserver.config.k8s.io/v1alpha1'];
const CLAIMS_VARS = { claims: 'dyn' };
const USER_VARS = { user: 'dyn' };

type Raw = Record<string, unknown>;

function obj(v: unknown, at: string): Raw {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw new AuthenticationConfigError(`${at}: must be an object`);
  return v as Raw;
}

function list(v: unknown, at: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new AuthenticationConfigError(`${at}: must be a list`);
  return v;
}

function str(v: unknown, at: string, required = false): string | undefined {
  if (v === undefined || v === null || v === '') {
    if (required) throw new AuthenticationConfigError(`${at}: Required value`);
    return undefined;
  }
  if (typeof v !== 'string') throw new AuthenticationConfigError(`${at}: must be a string`);
  return v;
}

function cel(expression: string, vars: Record<string, string>, at: string): CelProgram {
  try {
    return compileCel(expression, vars);
  } catch (err) {
    if (err instanceof CelCompileError) throw new AuthenticationConfigError(`${at}: Invalid value: compilation failed: ${err.message}`);
    throw err;
  }
}

function httpsUrl(v: unknown, at: string, required: boolean): string | undefined {
  const s = str(v, at, required);
  if (s === undefined) return undefined;
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    throw new AuthenticationConfigError(`${at}: Invalid value: ${JSON.stringify(s)}: must be a valid URL`);
  }
  if (u.protocol !== 'https:') throw new AuthenticationConfigError(`${at}: Invalid value: ${JSON.stringify(s)}: must use https scheme`);
  if (u.search || u.hash || u.username) throw new AuthenticationConfigError(`${at}: Invalid value: ${JSON.stringify(s)}: must not contain a query, fragment or user`);
  return s;
}

function claimOrExpression(raw: unknown, at: string, prefixRequired: boolean): ClaimOrExpression | undefined {
  if (raw === undefined || raw === null) return undefined;
  const r = obj(raw, at);
  const claim = str(r.claim, `${at}.claim`);
  const expression = str(r.expression, `${at}.expression`);
  if (claim && expression) throw new AuthenticationConfigError(`${at}: Invalid value: claim and expression can't both be set`);
  if (!claim && !expression) throw new AuthenticationConfigError(`${at}: Required value: claim or expression is required`);
  if (expression) {
    if (r.prefix !== undefined) throw new AuthenticationConfigError(`${at}.prefix: Invalid value: may not be specified when expression is set`);
    return { expression: cel(expression, CLAIMS_VARS, `${at}.expression`) };
  }
  if (prefixRequired && typeof r.prefix !== 'string') throw new AuthenticationConfigError(`${at}.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing`);
  return { claim, prefix: typeof r.prefix === 'string' ? r.prefix : '' };
}

function issuerEntry(raw: unknown, at: string): JwtIssuerConfig {
  const r = obj(raw, at);
  const issuer = obj(r.issuer, `${at}.issuer`);
  const url = httpsUrl(issuer.url, `${at}.issuer.url`, true)!;
  const audiences = list(issuer.audiences, `${at}.issuer.audiences`).map((a, i) => str(a, `${at}.issuer.audiences[${i}]`, true)!);
  if (audiences.length === 0) throw new AuthenticationConfigError(`${at}.issuer.audiences: Required value: at least one issuer.audiences is required`);
  const mappings = obj(r.claimMappings, `${at}.claimMappings`);
  const username = claimOrExpression(mappings.username, `${at}.claimMappings.username`, true);
  if (!username) throw new AuthenticationConfigError(`${at}.claimMappings.username: Required value: claim or expression is required`);
  const extra = list(mappings.extra, `${at}.claimMappings.extra`).map((e, i) => {
    const x = obj(e, `${at}.claimMappings.extra[${i}]`);
    const key = str(x.key, `${at}.claimMappings.extra[${i}].key`, true)!;
    if (key !== key.toLowerCase() || !key.includes('/')) throw new AuthenticationConfigError(`${at}.claimMappings.extra[${i}].key: Invalid value: ${JSON.stringify(key)}: must be a domain-prefix path in lower case`);
    const expr = str(x.valueExpression, `${at}.claimMappings.extra[${i}].valueExpression`, true)!;
    return { key, valueExpression: cel(expr, CLAIMS_VARS, `${at}.claimMappings.extra[${i}].valueExpression`) };
  });
  const claimValidationRules = list(r.claimValidationRules, `${at}.claimValidationRules`).map((v, i) => {
    const x = obj(v, `${at}.claimValidationRules[${i}]`);
    const p = `${at}.claimValidationRules[${i}]`;
    const expression = str(x.expression, `${p}.expression`);
    if (expression) return { expression: cel(expression, CLAIMS_VARS, `${p}.expression`), message: str(x.message, `${p}.message`) };
    return { claim: str(x.claim, `${p}.claim`, true), requiredValue: str(x.requiredValue, `${p}.requiredValue`) ?? '' };
  });
  const userValidationRules = list(r.userValidationRules, `${at}.userValidationRules`).map((v, i) => {
    const x = obj(v, `${at}.userValidationRules[${i}]`);
    const expression = str(x.expression, `${at}.userValidationRules[${i}].expression`, true)!;
    return { expression: cel(expression, USER_VARS, `${at}.userValidationRules[${i}].expression`), message: str(x.message, `${at}.userValidationRules[${i}].message`) ?? '' };
  });
  return {
    url,
    discoveryURL: httpsUrl(issuer.discoveryURL, `${at}.issuer.discoveryURL`, false),
    certificateAuthority: str(issuer.certificateAuthority, `${at}.issuer.certificateAuthority`),
    audiences,
    claimValidationRules,
    username,
    groups: claimOrExpression(mappings.groups, `${at}.claimMappings.groups`, true),
    uid: claimOrExpression(mappings.uid, `${at}.claimMappings.uid`, false),
    extra,
    userValidationRules,
  };
}

function knownFields(r: Raw, at: string, known: string[]): void {
  // Upstream decodes the file strictly: a misspelt field is an error, not a silently ignored setting.
  for (const k of Object.keys(r)) if (!known.includes(k)) throw new AuthenticationConfigError(`strict decoding error: unknown field "${at ? `${at}.` : ''}${k}"`);
}

/** The `anonymous` block: undefined when absent; upstream's rule that conditions need `enabled: true`; paths absolute. */
function anonymousBlock(raw: unknown): AnonymousConfig | undefined {
  if (raw === undefined || raw === null) return undefined;
  const r = obj(raw, 'anonymous');
  knownFields(r, 'anonymous', ['enabled', 'conditions']);
  if (r.enabled !== undefined && typeof r.enabled !== 'boolean') throw new AuthenticationConfigError(`anonymous.enabled: Invalid value: ${JSON.stringify(r.enabled)}: must be a boolean`);
  const conditions = list(r.conditions, 'anonymous.conditions').map((c, i) => {
    const at = `anonymous.conditions[${i}]`;
    const x = obj(c, at);
    knownFields(x, at, ['path']);
    const path = str(x.path, `${at}.path`, true)!;
    if (!path.startsWith('/')) throw new AuthenticationConfigError(`${at}.path: Invalid value: ${JSON.stringify(path)}: must be an absolute path (start with "/")`);
    return { path };
  });
  const enabled = r.enabled === true;
  if (!enabled && conditions.length > 0) {
    throw new AuthenticationConfigError(`anonymous.conditions: Invalid value: ${JSON.stringify(conditions)}: enabled should be set to true when conditions are defined`);
  }
  return { enabled, conditions };
}

/**
 * Parses upstream's structured authentication configuration
 * (`apiVersion: apiserver.config.k8s.io/v1|v1beta1|v1alpha1`, `kind:
 * AuthenticationConfiguration`, YAML or JSON) into validated, compiled JWT
 * issuer entries and the `anonymous` block. Pure; throws
 * AuthenticationConfigError naming the field.
 */
export function readAuthenticationConfiguration(text: string): AuthenticationConfiguration {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new AuthenticationConfigError(`not valid YAML or JSON: ${(err as Error).message}`);
  }
  if (raw === undefined || raw === null) throw new AuthenticationConfigError('empty config data');
  const r = obj(raw, 'configuration');
  if (!API_VERSIONS.includes(String(r.apiVersion)) || r.kind !== 'AuthenticationConfiguration') {
    throw new AuthenticationConfigError(`expected kind AuthenticationConfiguration in ${API_VERSIONS.join(', ')}; got ${String(r.apiVersion)}/${String(r.kind)}`);
  }
  const issuers = list(r.jwt, 'jwt').map((j, i) => issuerEntry(j, `jwt[${i}]`));
  const seen = new Set<string>();
  issuers.forEach((j, i) => {
    if (seen.has(j.url)) throw new AuthenticationConfigError(`jwt[${i}].issuer.url: Duplicate value: ${JSON.stringify(j.url)}`);
    seen.add(j.url);
  });
  const anonymous = anonymousBlock(r.anonymous);
  return anonymous ? { jwt: issuers, anonymous } : { jwt: issuers };
}

/** The JWT issuers of the configuration ({@link readAuthenticationConfiguration}'s `jwt`). Throws as it does. */
export function parseAuthenticationConfiguration(text: string): JwtIssuerConfig[] {
  return readAuthenticationConfiguration(text).jwt;
}
