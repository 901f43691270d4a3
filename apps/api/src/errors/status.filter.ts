import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { AdmissionError } from '@plinth/admission';
import { isDatabaseError, isDatabaseUnavailable, isStorageError } from '@plinth/storage';
import { sendPlain, setWarnings } from '../http/response-writer.js';
import { ApiError } from '@plinth/apimachinery';

interface FastifyLikeError {
  statusCode?: number;
  code?: string;
  message?: string;
}

/**
 * Maps anything thrown to the ApiError the client gets. A database that
 * cannot be reached becomes 503 with Retry-After (without the driver's
 * text); other unknown errors become 500 InternalError.
 */
export function toApiError(err: unknown): { error: ApiError; unexpected: boolean } {
  if (err instanceof ApiError) return { error: err, unexpected: false };
  if (isDatabaseUnavailable(err)) return { error: ApiError.storageUnavailable(), unexpected: false };
  // A tenant's shard that is down or not connected: only its tenants get this.
  if (isStorageError(err, 'Unavailable')) return { error: ApiError.unavailable(err.message), unexpected: false };
  // A stored value that cannot be decrypted (logged and counted where it was read).
  if (isStorageError(err, 'Internal')) return { error: ApiError.internal(err.message), unexpected: false };
  if (err instanceof AdmissionError) {
    const s = err.status;
    return { error: new ApiError(s.code, s.reason, s.message, s.details), unexpected: false };
  }
  const fe = err as FastifyLikeError;
  if (fe?.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || fe?.statusCode === 413) {
    return { error: ApiError.tooLarge('Request entity too large: limit is 3145728'), unexpected: false };
  }
  if (err instanceof HttpException) {
    const code = err.getStatus();
    if (code === 413) return { error: ApiError.tooLarge('Request entity too large: limit is 3145728'), unexpected: false };
    if (code === 404) return { error: new ApiError(404, 'NotFound', 'the server could not find the requested resource', {}), unexpected: false };
    if (code < 500) return { error: new ApiError(code, code === 415 ? 'UnsupportedMediaType' : 'BadRequest', err.message), unexpected: false };
  }
  if (fe?.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    const reason = fe.statusCode === 415 ? 'UnsupportedMediaType' : 'BadRequest';
    return { error: new ApiError(fe.statusCode, reason, fe.message ?? 'bad request'), unexpected: false };
  }
  if (isDatabaseError(err)) return { error: ApiError.internal('the storage backend failed to process the request'), unexpected: true };
  return { error: ApiError.internal(err instanceof Error ? err.message : String(err)), unexpected: true };
}

/** Writes every error as a Kubernetes Status with the matching HTTP code. */
@Catch()
export class StatusExceptionFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const req = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const { error, unexpected } = toApiError(exception);
    if (unexpected) this.logger.error({ err: exception, method: req.method, url: req.url }, 'unexpected error');
    if (reply.sent || reply.raw.headersSent) return;
    for (const [k, v] of Object.entries(error.headers)) reply.header(k, v);
    setWarnings(reply, req.plinthWarnings ?? []);
    sendPlain(req, reply, error.code, error.status);
  }
}
