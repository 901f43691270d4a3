import { readFileSync } from 'node:fs';
import type { AppConfig } from '../config/app-config.js';
import { parseAuthenticationConfiguration } from '../authn/authentication-configuration.js';
import type { ConsoleAsset } from './console-assets.js';

/** An issuer the console offers the authorization-code flow with: its URL and client id (its first audience). */
export interface ConsoleOidcIssuer {
  issuer: string;
  clientId: string;
}

/**
 * The JWT issuers of PLINTH_AUTHENTICATION_CONFIG the console can log in
 * with; none when the file is unset or unreadable (authentication itself
 * refuses to start on a bad file and says why).
 */
export function consoleOidcIssuers(config: AppConfig): ConsoleOidcIssuer[] {
  if (!config.authenticationConfigFile) return [];
  try {
    return parseAuthenticationConfiguration(readFileSync(config.authenticationConfigFile, 'utf8'))
      .filter((i) => i.audiences.length > 0)
      .map((i) => ({ issuer: i.url, clientId: i.audiences[0]! }));
  } catch {
    return [];
  }
}

/** The origins of the issuers (and their discovery URLs): what the console's CSP lets it fetch besides itself. */
export function oidcOrigins(config: AppConfig, issuers: ConsoleOidcIssuer[]): string[] {
  const urls = issuers.map((i) => i.issuer);
  if (config.authenticationConfigFile) {
    try {
      for (const i of parseAuthenticationConfiguration(readFileSync(config.authenticationConfigFile, 'utf8'))) if (i.discoveryURL) urls.push(i.discoveryURL);
    } catch {
      // consoleOidcIssuers found none either
    }
  }
  return [...new Set(urls.map((u) => new URL(u).origin))];
}

/** `/console/oidc.json`: the issuers, revalidated on every load (the configuration may change at restart). */
export function oidcAsset(issuers: ConsoleOidcIssuer[]): ConsoleAsset {
  return { body: Buffer.from(JSON.stringify({ issuers })), contentType: 'application/json', immutable: false };
}
