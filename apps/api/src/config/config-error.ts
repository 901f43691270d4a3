import { redactCredentials } from './redact-credentials.js';

/**
 * Thrown by loadConfig (app-config.ts); `message` lists every bad variable. It is
 * printed at start-up, so the values it echoes have their passwords (of
 * URLs, `password=` settings) redacted.
 */
export class ConfigError extends Error {}

/**
 * The error for a variable its parser rejected; the parser's message may
 * quote the value, so it is redacted. Returns the error, does not throw it.
 */
export function rejected(variable: string, err: unknown): ConfigError {
  return new ConfigError(`invalid configuration:\n  ${variable}: ${redactCredentials((err as Error).message)}`);
}
