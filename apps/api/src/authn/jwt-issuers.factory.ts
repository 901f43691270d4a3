import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config.js';
import type { TokenAuthenticator } from './authenticator.js';

/** The JWT issuer authenticators of PLINTH_AUTHENTICATION_CONFIG; none when it is unset. */
export async function loadJwtAuthenticators(config: AppConfig, _logger: Logger): Promise<TokenAuthenticator[]> {
  if (!config.authenticationConfigFile) return [];
  throw new Error('PLINTH_AUTHENTICATION_CONFIG: JWT issuers are not supported yet');
}
