import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR } from '@nestjs/core';
import type { Logger } from 'pino';
import { AuditModule } from './audit.module.js';
import { AuthnModule } from './authn.module.js';
import { AuthzModule } from './authz.module.js';
import { StatusExceptionFilter } from '../errors/status.filter.js';
import { FlowControlModule } from './flowcontrol.module.js';
import { LOGGER } from '../observability/logger.js';
import { RequestPipeline } from '../pipeline/request-pipeline.js';
import { RequestTracingInterceptor } from '../pipeline/request-tracing.js';
import { TRACING, type Tracing } from '../observability/tracing.js';

/** The request path in front of every controller ({@link RequestPipeline}) and the filter that answers every error as a Status. */
@Module({
  imports: [AuditModule, AuthnModule, AuthzModule, FlowControlModule],
  providers: [
    RequestPipeline,
    { provide: APP_FILTER, useFactory: (logger: Logger) => new StatusExceptionFilter(logger), inject: [LOGGER] },
  ],
})
export class RequestPipelineModule {
  /**
   * The module, with the interceptor that runs handlers inside their
   * request's trace context when `tracing` is on (without it, no
   * interceptor: requests take Nest's path without one).
   */
  static forRoot(tracing: boolean): DynamicModule {
    return {
      module: RequestPipelineModule,
      providers: tracing ? [{ provide: APP_INTERCEPTOR, useFactory: (t: Tracing) => new RequestTracingInterceptor(t), inject: [TRACING] }] : [],
    };
  }
}
