import type { LoggerService } from '@nestjs/common';
import { pino, type Logger } from 'pino';

/** Creates the process logger: JSON lines on stdout. */
export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'plinth' } });
}

/** Adapts pino to Nest's LoggerService so framework messages are structured too. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}
  log(message: unknown, context?: string): void {
    this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }
}

/** Injection token of the server's pino {@link Logger}. */
export const LOGGER = Symbol('LOGGER');
