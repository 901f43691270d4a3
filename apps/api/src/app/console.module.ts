import { Inject, Module } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { defaultConsoleDir, loadConsoleAssets } from '../console/console-assets.js';
import { consoleCsp } from '../console/console-headers.js';
import { consoleOidcIssuers, oidcAsset, oidcOrigins } from '../console/console-oidc.js';
import { registerConsoleStatic } from '../console/console-static.js';

/**
 * The web console at `/console/` on the API's own port (the built
 * apps/console, read once at start-up, and /console/oidc.json naming the
 * configured OIDC issuers for the authorization-code login). Its hook is
 * added while the module is constructed, before any module's
 * onModuleInit, so it runs ahead of the request pipeline's authentication
 * (registered in RequestPipeline's onModuleInit): the static page loads
 * without credentials, and nothing outside /console/ is affected.
 */
@Module({})
export class ConsoleModule {
  constructor(@Inject(HttpAdapterHost) adapterHost: HttpAdapterHost, @Inject(APP_CONFIG) config: AppConfig) {
    const assets = loadConsoleAssets(defaultConsoleDir());
    const issuers = consoleOidcIssuers(config);
    if (assets.size > 0) assets.set('/console/oidc.json', oidcAsset(issuers));
    registerConsoleStatic(adapterHost.httpAdapter.getInstance<FastifyInstance>(), assets, consoleCsp(oidcOrigins(config, issuers)));
  }
}
