import { Global, Module } from '@nestjs/common';
import { GracefulShutdown } from '../lifecycle/graceful-shutdown.js';
import { PostStartHooks } from '../lifecycle/post-start-hooks.js';
import { ShutdownSequence } from '../lifecycle/shutdown-sequence.js';

/**
 * The server's own lifecycle (global): post-start hooks run once it
 * listens, the graceful shutdown phase that /readyz and the request path
 * read, and the drain that runs before Nest closes the modules.
 */
@Global()
@Module({
  providers: [GracefulShutdown, PostStartHooks, ShutdownSequence],
  exports: [GracefulShutdown, PostStartHooks, ShutdownSequence],
})
export class LifecycleModule {}
