import { Inject, Injectable } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { LOGGER } from '../observability/logger.js';
import { WatchService } from '../watch/watch.service.js';
import { GracefulShutdown } from './graceful-shutdown.js';

/** How long a fast stop (no signal, no graceful request: tests) lets open connections finish before it cuts them. */
const FAST_STOP_GRACE_MS = 500;

/**
 * What happens first when the application closes, before any module stops
 * its own work (AppModule's beforeApplicationShutdown runs it): on a
 * signal or a requested graceful shutdown, kube-apiserver's sequence (see
 * {@link GracefulShutdown}) with the configured delay and drain bound;
 * otherwise (tests' fast stop) watches end, the listener closes at once and
 * connections still open half a second later are cut.
 */
@Injectable()
export class ShutdownSequence {
  private gracefulRequested = false;

  constructor(
    @Inject(GracefulShutdown) private readonly shutdown: GracefulShutdown,
    @Inject(WatchService) private readonly watch: WatchService,
    @Inject(HttpAdapterHost) private readonly http: HttpAdapterHost,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Makes the next close graceful even without a signal (RunningServer.shutdown). */
  requestGraceful(): void {
    this.gracefulRequested = true;
  }

  /** Runs the sequence: graceful when a signal arrived or one was requested. */
  async run(signal?: string): Promise<void> {
    const closeHttp = async () => {
      // HTTP/2 clients are told to go away before the listener closes; otherwise an idle connection (kubectl,
      // client-go) holds the drain until its bound and is then cut with whatever it sent meanwhile.
      this.shutdown.goAway();
      await this.http.httpAdapter?.close();
    };
    if (!signal && !this.gracefulRequested) {
      await this.watch.stop();
      // A fast stop promises no drain: what is still open after a moment (an idle keep-alive connection,
      // a client still sending) is cut, rather than holding the close for as long as it lasts.
      const closed = closeHttp();
      const cut = setTimeout(() => this.shutdown.destroyConnections(), FAST_STOP_GRACE_MS);
      await closed.finally(() => clearTimeout(cut));
      return;
    }
    await this.shutdown.run({
      delayMs: this.config.shutdownDelaySeconds * 1000,
      timeoutMs: this.config.shutdownTimeoutSeconds * 1000,
      endWatches: () => this.watch.stop(),
      closeHttp,
      log: (message, fields) => this.logger.info(fields ?? {}, message),
    });
  }
}
