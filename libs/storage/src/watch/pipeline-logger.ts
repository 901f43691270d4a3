/**
 * The logging the watch pipeline needs: a structural subset of pino's
 * Logger, so the storage library does not depend on the app's logger.
 */
export interface PipelineLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  debug?(obj: object, msg?: string): void;
}
