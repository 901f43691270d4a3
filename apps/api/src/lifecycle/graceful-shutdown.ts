import type { Http2Session } from 'node:http2';
import type { Socket } from 'node:net';
import { Injectable } from '@nestjs/common';
import { ApiError } from '@plinth/apimachinery';
import type { FastifyInstance } from 'fastify';
import { sendPlain } from '../http/response-writer.js';

/** Where a replica is in its shutdown. */
export type ShutdownPhase = 'serving' | 'delaying' | 'draining';

/** The steps of a graceful shutdown, in order (see {@link GracefulShutdown.run}). */
export interface ShutdownSteps {
  /** How long /readyz fails while requests are still served, so load balancers stop sending new ones. */
  delayMs: number;
  /** The most in-flight requests may take to finish once draining starts. */
  timeoutMs: number;
  /** Ends every watch cleanly (the client re-watches elsewhere) and refuses new ones. */
  endWatches(): Promise<void>;
  /** Stops listening and resolves once in-flight requests are done. */
  closeHttp(): Promise<void>;
  log(message: string, fields?: Record<string, unknown>): void;
}

/**
 * Graceful shutdown as kube-apiserver does it: on SIGTERM `/readyz` fails at
 * once (`[-]shutdown failed: reason withheld`) while requests are still
 * served for a configurable delay; then new requests get 503 with
 * `Connection: close` and `Retry-After`, watches end cleanly, in-flight
 * requests finish (up to a bound), the listener closes, and the process may
 * exit (the modules then stop their own work in Nest's shutdown hooks).
 */
@Injectable()
export class GracefulShutdown {
  private current: ShutdownPhase = 'serving';

  /** The current phase. */
  get phase(): ShutdownPhase {
    return this.current;
  }

  /** True from the signal on: /readyz fails. */
  get shuttingDown(): boolean {
    return this.current !== 'serving';
  }

  /** Open HTTP/2 sessions (connections), told to go away when the listener closes. */
  private readonly sessions = new Set<Http2Session>();

  /**
   * Sends GOAWAY (NO_ERROR, the last stream this server processed) on every
   * open HTTP/2 connection: streams in flight finish, the client opens no new
   * ones here (a stream it sent meanwhile is above the last stream id, so it
   * knows it was not processed and may retry elsewhere), and an idle
   * connection closes at once instead of holding the drain until its bound.
   * Idempotent; mutates nothing else.
   */
  goAway(): void {
    for (const session of this.sessions) if (!session.closed && !session.destroyed) session.close();
  }

  /** Open TLS connections of either protocol, cut by {@link destroyConnections}. */
  private readonly connections = new Set<Socket>();

  /**
   * Destroys every connection still open (an idle HTTP/1.1 keep-alive one
   * would otherwise hold the listener's close until the client or the
   * keep-alive timeout ends it). Returns how many it cut.
   */
  destroyConnections(): number {
    const open = [...this.connections];
    for (const socket of open) socket.destroy();
    return open.length;
  }

  /**
   * Refuses requests that arrive while draining with a 503 Status, and keeps
   * track of connections: HTTP/2 ones for {@link goAway}, all of them for
   * {@link destroyConnections} (registered on the Fastify instance and its
   * server).
   */
  register(fastify: FastifyInstance): void {
    fastify.server.on('session', (session: Http2Session) => {
      this.sessions.add(session);
      session.once('close', () => this.sessions.delete(session));
    });
    fastify.server.on('secureConnection', (socket: Socket) => {
      this.connections.add(socket);
      socket.once('close', () => this.connections.delete(socket));
    });
    fastify.addHook('onRequest', async (req, reply) => {
      if (this.current !== 'draining') return;
      const err = new ApiError(503, 'ServiceUnavailable', 'the server is shutting down; retry on another server', { retryAfterSeconds: 1 }, { 'Retry-After': '1' });
      reply.header('Retry-After', '1').header('Connection', 'close');
      sendPlain(req, reply, err.code, err.status);
      return reply;
    });
    // Responses of requests that were in flight when draining began close their connection too, so no idle keep-alive holds the drain.
    fastify.addHook('onSend', async (_req, reply, payload) => {
      if (this.current === 'draining') reply.header('Connection', 'close');
      return payload;
    });
  }

  /** Runs the shutdown steps once; later calls wait for the first. */
  run(steps: ShutdownSteps): Promise<void> {
    this.running ??= this.sequence(steps);
    return this.running;
  }

  private running: Promise<void> | undefined;

  private async sequence(steps: ShutdownSteps): Promise<void> {
    this.current = 'delaying';
    steps.log('shutdown: not ready; still serving', { delayMs: steps.delayMs });
    await new Promise((r) => setTimeout(r, steps.delayMs));
    this.current = 'draining';
    steps.log('shutdown: draining');
    await steps.endWatches();
    const drained = await Promise.race([
      steps.closeHttp().then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), steps.timeoutMs).unref()),
    ]);
    if (!drained) steps.log('shutdown: in-flight requests did not finish in time; cutting their connections', { timeoutMs: steps.timeoutMs, connections: this.destroyConnections() });
    steps.log('shutdown: drained; stopping the modules');
  }
}
