import { Inject, Module } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { defaultConsoleDir, loadConsoleAssets } from './console-assets.js';
import { registerConsoleStatic } from './console-static.js';

/**
 * The web console at `/console/` on the API's own port (the built
 * apps/console, read once at start-up). Its hook is added while the module
 * is constructed, before any module's onModuleInit, so it runs ahead of the
 * request pipeline's authentication (registered in RequestPipeline's
 * onModuleInit): the static page loads without credentials, and nothing
 * outside /console/ is affected.
 */
@Module({})
export class ConsoleModule {
  constructor(@Inject(HttpAdapterHost) adapterHost: HttpAdapterHost) {
    registerConsoleStatic(adapterHost.httpAdapter.getInstance<FastifyInstance>(), loadConsoleAssets(defaultConsoleDir()));
  }
}
