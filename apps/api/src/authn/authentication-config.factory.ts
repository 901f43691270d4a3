import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config.js';
import { ANONYMOUS_EVERYWHERE, ANONYMOUS_NOWHERE } from './anonymous.authenticator.js';
import { type AnonymousConfig, AuthenticationConfigError, readAuthenticationConfiguration } from './authentication-configuration.js';
import { JwtAuthenticatorSet } from './jwt-authenticator-set.js';
import { JwtAuthenticator } from './jwt.authenticator.js';

/** Injection token of the {@link LoadedAuthenticationConfig} of one server. */
export const AUTHENTICATION_CONFIG = Symbol('AUTHENTICATION_CONFIG');

/** PLINTH_AUTHENTICATION_CONFIG as loaded at start-up, with PLINTH_ANONYMOUS_AUTH folded in. */
export interface LoadedAuthenticationConfig {
  /** The JWT issuers (none without the file), replaceable by a reload. */
  jwt: JwtAuthenticatorSet;
  /** Anonymous requests: the file's `anonymous` block when it has one, else PLINTH_ANONYMOUS_AUTH. */
  anonymous: AnonymousConfig;
  /** The file's content and its `anonymous` block, when the file is set (what a reload starts from). */
  file?: { path: string; text: string; anonymous: AnonymousConfig | undefined };
}

/**
 * Reads PLINTH_AUTHENTICATION_CONFIG (when set) and resolves anonymous
 * authentication as upstream does: the file's `anonymous` block when it
 * has one (then PLINTH_ANONYMOUS_AUTH, upstream's --anonymous-auth, must
 * not be set), else PLINTH_ANONYMOUS_AUTH (default on, everywhere).
 * Throws (stopping start-up) naming the setting and the field when the
 * file is unreadable or invalid. Issuers are contacted lazily, at their first token.
 */
export function loadAuthenticationConfig(config: AppConfig, logger: Logger): LoadedAuthenticationConfig {
  const fromFlag = config.anonymousAuth ? ANONYMOUS_EVERYWHERE : ANONYMOUS_NOWHERE;
  const file = config.authenticationConfigFile;
  if (!file) return { jwt: new JwtAuthenticatorSet([]), anonymous: fromFlag };
  const text = readFileSync(file, 'utf8');
  let parsed;
  try {
    parsed = readAuthenticationConfiguration(text);
    if (parsed.anonymous && config.anonymousAuthSet) {
      throw new AuthenticationConfigError('anonymous: Forbidden: PLINTH_ANONYMOUS_AUTH cannot be set when anonymous field is configured in authentication configuration file');
    }
  } catch (err) {
    throw new Error(`PLINTH_AUTHENTICATION_CONFIG ${file}: ${(err as Error).message}`);
  }
  const anonymous = parsed.anonymous ?? fromFlag;
  logger.info({ issuers: parsed.jwt.map((i) => i.url), anonymous }, 'authentication configuration loaded');
  return { jwt: new JwtAuthenticatorSet(parsed.jwt.map((i) => new JwtAuthenticator(i))), anonymous, file: { path: file, text, anonymous: parsed.anonymous } };
}
