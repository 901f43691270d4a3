import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config.js';
import { parseAuthenticationConfiguration } from './authentication-configuration.js';
import type { TokenAuthenticator } from './authenticator.js';
import { JwtAuthenticator } from './jwt.authenticator.js';

/**
 * The JWT issuer authenticators of PLINTH_AUTHENTICATION_CONFIG, in file
 * order; none when it is unset. Throws (stopping start-up) when the file
 * is unreadable or invalid. Issuers are contacted lazily, at their first token.
 */
export async function loadJwtAuthenticators(config: AppConfig, logger: Logger): Promise<TokenAuthenticator[]> {
  if (!config.authenticationConfigFile) return [];
  let issuers;
  try {
    issuers = parseAuthenticationConfiguration(readFileSync(config.authenticationConfigFile, 'utf8'));
  } catch (err) {
    throw new Error(`PLINTH_AUTHENTICATION_CONFIG ${config.authenticationConfigFile}: ${(err as Error).message}`);
  }
  logger.info({ issuers: issuers.map((i) => i.url) }, 'JWT issuers configured');
  return issuers.map((i) => new JwtAuthenticator(i));
}
