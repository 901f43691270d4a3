import { type Environment, Optional } from '@marcbachmann/cel-js';
import {
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
} from '@plinth/apimachinery';
import { CelCidr, CelIp, CelUrl } from './cel-network.js';
import { registerSemverLibrary } from './cel-semver.library.js';
import { Quantity } from '@plinth/apimachinery';

/**
 * Kubernetes' typed CEL libraries: `url()`, `quantity()`, `ip()`,
 * `cidr()`, `semver()` (cel-semver.library.ts) and the `format` library
 * of named string formats.
 *
 * Each type has `==` and `!=` with itself, as upstream's ref.Val Equal
 * (k8s.io/apiserver pkg/cel): Quantity by value (`1 == 1000m`), IP by
 * family and address, CIDR by address and prefix length (unmasked), URL
 * by Go's URL.String(), Format by name. Two different types compare at
 * compile time as upstream does: not at all (`no such overload`).
 */

/** A named string format of the `format` library. */
export class CelFormat {
  constructor(
    readonly name: string,
    readonly check: (s: string) => string[],
  ) {}
}

function prefixCheck(check: (s: string) => string[]): (s: string) => string[] {
  return (s) => check(s.length > 1 && s.endsWith('-') ? `${s.slice(0, -2)}a` : s);
}

const FORMATS: Record<string, CelFormat> = {
  dns1123Label: new CelFormat('DNS1123Label', isDNS1123Label),
  dns1123Subdomain: new CelFormat('DNS1123Subdomain', isDNS1123Subdomain),
  dns1035Label: new CelFormat('DNS1035Label', isDNS1035Label),
  qualifiedName: new CelFormat('QualifiedName', isQualifiedName),
  dns1123LabelPrefix: new CelFormat('DNS1123LabelPrefix', prefixCheck(isDNS1123Label)),
  dns1123SubdomainPrefix: new CelFormat('DNS1123SubdomainPrefix', prefixCheck(isDNS1123Subdomain)),
  dns1035LabelPrefix: new CelFormat('DNS1035LabelPrefix', prefixCheck(isDNS1035Label)),
  labelValue: new CelFormat('LabelValue', isValidLabelValue),
  uri: new CelFormat('URI', (s) => {
    try {
      CelUrl.parse(s);
      return [];
    } catch (err) {
      return [(err as Error).message];
    }
  }),
  uuid: new CelFormat('uuid', (s) => (/^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s) ? [] : ['does not match the UUID format'])),
  byte: new CelFormat('byte', (s) => (/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s) ? [] : ['invalid base64'])),
  date: new CelFormat('date', (s) => (/^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)) ? [] : ['invalid date'])),
  datetime: new CelFormat('datetime', (s) => (!Number.isNaN(Date.parse(s)) && /^\d{4}-\d{2}-\d{2}T/.test(s) ? [] : ['invalid datetime'])),
};

function toQuantity(v: Quantity | bigint): Quantity {
  return typeof v === 'bigint' ? Quantity.fromInt(v) : v;
}

function registerUrl(env: Environment): void {
  env.registerType('URL', CelUrl);
  env.registerFunction('url(string): URL', (s: string) => {
    try {
      return CelUrl.parse(s);
    } catch (err) {
      throw new Error(`URL parse error during conversion from string: ${(err as Error).message}`);
    }
  });
  env.registerFunction('isURL(string): bool', (s: string) => {
    try {
      CelUrl.parse(s);
      return true;
    } catch {
      return false;
    }
  });
  env.registerFunction('URL.getScheme(): string', (u: CelUrl) => u.scheme);
  env.registerFunction('URL.getHost(): string', (u: CelUrl) => u.host);
  env.registerFunction('URL.getHostname(): string', (u: CelUrl) => u.hostname());
  env.registerFunction('URL.getPort(): string', (u: CelUrl) => u.port());
  env.registerFunction('URL.getEscapedPath(): string', (u: CelUrl) => u.escapedPath());
  env.registerFunction('URL.getQuery(): map<string, list<string>>', (u: CelUrl) => u.query());
  env.registerOperator('URL == URL', (a: CelUrl, b: CelUrl) => a.equals(b));
}

function registerQuantity(env: Environment): void {
  env.registerType('Quantity', Quantity);
  env.registerFunction('quantity(string): Quantity', (s: string) => Quantity.parse(s));
  env.registerFunction('isQuantity(string): bool', (s: string) => {
    try {
      Quantity.parse(s);
      return true;
    } catch {
      return false;
    }
  });
  env.registerFunction('Quantity.sign(): int', (q: Quantity) => BigInt(q.sign()));
  env.registerFunction('Quantity.isInteger(): bool', (q: Quantity) => q.isInteger());
  env.registerFunction('Quantity.asInteger(): int', (q: Quantity) => q.asInteger());
  env.registerFunction('Quantity.asApproximateFloat(): double', (q: Quantity) => q.asApproximateFloat());
  env.registerFunction('Quantity.compareTo(Quantity): int', (a: Quantity, b: Quantity) => BigInt(a.compareTo(b)));
  env.registerFunction('Quantity.isGreaterThan(Quantity): bool', (a: Quantity, b: Quantity) => a.compareTo(b) > 0);
  env.registerFunction('Quantity.isLessThan(Quantity): bool', (a: Quantity, b: Quantity) => a.compareTo(b) < 0);
  env.registerFunction('Quantity.add(Quantity): Quantity', (a: Quantity, b: Quantity) => a.add(b));
  env.registerFunction('Quantity.add(int): Quantity', (a: Quantity, b: bigint) => a.add(toQuantity(b)));
  env.registerFunction('Quantity.sub(Quantity): Quantity', (a: Quantity, b: Quantity) => a.sub(b));
  env.registerFunction('Quantity.sub(int): Quantity', (a: Quantity, b: bigint) => a.sub(toQuantity(b)));
  // resource.Quantity.Equal: by value, whatever the suffix or format.
  env.registerOperator('Quantity == Quantity', (a: Quantity, b: Quantity) => a.compareTo(b) === 0);
}

function registerNetwork(env: Environment): void {
  env.registerType('IP', CelIp);
  env.registerType('CIDR', CelCidr);
  env.registerFunction('ip(string): IP', (s: string) => CelIp.parse(s));
  env.registerFunction('isIP(string): bool', (s: string) => CelIp.tryParse(s) !== undefined);
  env.registerFunction('IP.family(): int', (ip: CelIp) => BigInt(ip.family));
  env.registerFunction('IP.isUnspecified(): bool', (ip: CelIp) => ip.isUnspecified());
  env.registerFunction('IP.isLoopback(): bool', (ip: CelIp) => ip.isLoopback());
  env.registerFunction('IP.isLinkLocalMulticast(): bool', (ip: CelIp) => ip.isLinkLocalMulticast());
  env.registerFunction('IP.isLinkLocalUnicast(): bool', (ip: CelIp) => ip.isLinkLocalUnicast());
  env.registerFunction('IP.isGlobalUnicast(): bool', (ip: CelIp) => ip.isGlobalUnicast());
  env.registerFunction('string(IP): string', (ip: CelIp) => ip.toString());
  env.registerFunction('cidr(string): CIDR', (s: string) => CelCidr.parse(s));
  env.registerFunction('isCIDR(string): bool', (s: string) => CelCidr.tryParse(s) !== undefined);
  env.registerFunction('CIDR.containsIP(IP): bool', (c: CelCidr, ip: CelIp) => c.containsIp(ip));
  env.registerFunction('CIDR.containsIP(string): bool', (c: CelCidr, ip: string) => c.containsIp(CelIp.parse(ip)));
  env.registerFunction('CIDR.containsCIDR(CIDR): bool', (c: CelCidr, o: CelCidr) => c.containsCidr(o));
  env.registerFunction('CIDR.containsCIDR(string): bool', (c: CelCidr, o: string) => c.containsCidr(CelCidr.parse(o)));
  env.registerFunction('CIDR.ip(): IP', (c: CelCidr) => c.ip);
  env.registerFunction('CIDR.prefixLength(): int', (c: CelCidr) => BigInt(c.bits));
  env.registerFunction('CIDR.masked(): CIDR', (c: CelCidr) => c.masked());
  env.registerFunction('string(CIDR): string', (c: CelCidr) => c.toString());
  env.registerOperator('IP == IP', (a: CelIp, b: CelIp) => a.equals(b));
  env.registerOperator('CIDR == CIDR', (a: CelCidr, b: CelCidr) => a.equals(b));
}

function registerFormat(env: Environment): void {
  class FormatNamespace {}
  env.registerType('FormatNamespace', FormatNamespace);
  env.registerType('Format', CelFormat);
  env.registerConstant('format', 'FormatNamespace', new FormatNamespace());
  env.registerFunction('FormatNamespace.named(string): optional<Format>', (_n: unknown, name: string) =>
    Object.hasOwn(FORMATS, name) ? Optional.of(FORMATS[name]) : Optional.none(),
  );
  for (const [name, fmt] of Object.entries(FORMATS)) env.registerFunction(`FormatNamespace.${name}(): Format`, () => fmt);
  env.registerFunction('Format.validate(string): optional<list<string>>', (f: CelFormat, s: string) => {
    const errs = f.check(s);
    return errs.length > 0 ? Optional.of(errs) : Optional.none();
  });
  env.registerOperator('Format == Format', (a: CelFormat, b: CelFormat) => a.name === b.name);
}

/** Registers url, quantity, ip, cidr, format and semver on `env`. */
export function registerKubernetesTypesLibrary(env: Environment): void {
  registerUrl(env);
  registerQuantity(env);
  registerNetwork(env);
  registerFormat(env);
  registerSemverLibrary(env);
}
