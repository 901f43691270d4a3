import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import type { Logger } from 'pino';
import { AuditModule } from './audit.module.js';
import { AuthnModule } from './authn.module.js';
import { AuthzModule } from './authz.module.js';
import { StatusExceptionFilter } from '../errors/status.filter.js';
import { FlowControlModule } from './flowcontrol.module.js';
import { LOGGER } from '../observability/logger.js';
import { RequestPipeline } from '../pipeline/request-pipeline.js';

/** The request path in front of every controller ({@link RequestPipeline}) and the filter that answers every error as a Status. */
@Module({
  imports: [AuditModule, AuthnModule, AuthzModule, FlowControlModule],
  providers: [
    RequestPipeline,
    { provide: APP_FILTER, useFactory: (logger: Logger) => new StatusExceptionFilter(logger), inject: [LOGGER] },
  ],
})
export class RequestPipelineModule {}
