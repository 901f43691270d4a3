import type pg from 'pg';
import { connectSession } from './host-list-connector.js';

/**
 * A probe of the server a URL leads to, on a session of its own (never
 * from the request pool: a pool busy with slow statements would make a
 * live server look down, and a pool stuck on a frozen one would make the
 * probe wait for a connection rather than for the server). The session is
 * kept between checks; a check that fails or times out ends it, and the
 * next check connects again, searching the URL's hosts
 * (`target_session_attrs`), so it also finds a new primary.
 */
export class ServerProbe {
  private client: pg.Client | undefined;

  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  /** Resolves once the server answered `SELECT 1` within the timeout (connecting if needed); rejects naming why not. */
  async check(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const work = this.run();
    try {
      await Promise.race([
        work,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
        }),
      ]);
    } catch (err) {
      this.drop();
      // A session that connects after the timeout is ended, not kept.
      work.then((late) => this.drop(late), () => undefined);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Ends the session (a later check connects again). */
  close(): void {
    this.drop();
  }

  /** One check; resolves with the session it used. */
  private async run(): Promise<pg.Client> {
    let client = this.client;
    if (!client) {
      const fresh = await connectSession(this.url, { connectionTimeoutMillis: this.timeoutMs, application_name: 'plinth-probe', keepAlive: true });
      fresh.on('error', () => this.drop(fresh));
      this.client = client = fresh;
    }
    await client.query('SELECT 1');
    return client;
  }

  private drop(which?: pg.Client): void {
    const c = this.client;
    if (!c || (which && which !== c)) return;
    this.client = undefined;
    // Destroyed, not ended: a frozen server never answers the Terminate message.
    (c as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
    c.end().catch(() => undefined);
  }
}
