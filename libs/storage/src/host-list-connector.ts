import pg from 'pg';

/** libpq's `target_session_attrs`: which of a URL's hosts a session may use. */
export type TargetSessionAttrs = 'any' | 'read-write' | 'read-only' | 'primary' | 'standby' | 'prefer-standby';

const ATTRS: readonly TargetSessionAttrs[] = ['any', 'read-write', 'read-only', 'primary', 'standby', 'prefer-standby'];

/** One host of a connection URL. */
export interface HostPort {
  host: string;
  port: number;
}

/** A libpq connection URL split into its hosts, what a session needs of its host, and one single-host URL per host. */
export interface HostList {
  hosts: HostPort[];
  targetSessionAttrs: TargetSessionAttrs;
  /** The URL with only host `i` (and no `target_session_attrs`), in the form `pg` parses. */
  urlFor(i: number): string;
  /** `h1:p1,h2:p2/db`: the hosts and database, never the credentials. */
  display: string;
  /** The database name (decoded). */
  database: string;
}

/**
 * Splits a libpq URL that may name several hosts
 * (`postgres://u:p@h1:5432,h2:5433,[::1]:5434/db?target_session_attrs=read-write`)
 * or one (or a Unix socket folder in `?host=`). Throws an Error naming what
 * is wrong (never the password) when the URL does not parse. Pure.
 */
export function parseHostList(url: string): HostList {
  const m = /^(postgres(?:ql)?:\/\/)([^@/?#]*@)?([^/?#]*)(\/[^?#]*)?(\?[^#]*)?$/.exec(url);
  if (!m) throw new Error('invalid PostgreSQL URL (expected postgres://[user[:password]@]host[:port][,host[:port]...]/database)');
  const [, scheme, auth = '', authority, path = '', query = ''] = m;
  const params = new URLSearchParams(query.slice(1));
  const attrs = (params.get('target_session_attrs') ?? 'any') as TargetSessionAttrs;
  if (!ATTRS.includes(attrs)) throw new Error(`invalid target_session_attrs "${attrs}" (one of ${ATTRS.join(', ')})`);
  params.delete('target_session_attrs');
  const rest = params.toString();
  const defaultPort = Number(params.get('port') ?? 5432);
  const hosts: HostPort[] = authority === '' ? [{ host: '', port: defaultPort }] : authority.split(',').map((part) => splitHostPort(part, defaultPort));
  const database = decodeURIComponent(path.slice(1)) || 'postgres';
  return {
    hosts,
    targetSessionAttrs: attrs,
    database,
    display: `${hosts.map((h) => (h.host ? `${h.host}:${h.port}` : (params.get('host') ?? 'localhost'))).join(',')}/${database}`,
    urlFor: (i) => {
      const h = hosts[i];
      const hostPart = h.host === '' ? '' : `${h.host.includes(':') ? `[${h.host}]` : h.host}:${h.port}`;
      return `${scheme}${auth}${hostPart}${path}${rest ? `?${rest}` : ''}`;
    },
  };
}

function splitHostPort(part: string, defaultPort: number): HostPort {
  const m = /^(?:\[([^\]]+)\]|([^:]*))(?::(\d+))?$/.exec(part);
  if (!m) throw new Error(`invalid host "${part}" in PostgreSQL URL`);
  const host = decodeURIComponent(m[1] ?? m[2] ?? '');
  return { host, port: m[3] ? Number(m[3]) : defaultPort };
}

/** What a session learned of its server: is it a standby (in recovery), is it read-only by default. */
interface SessionRole {
  inRecovery: boolean;
  readOnly: boolean;
}

const ROLE_QUERY = `SELECT pg_is_in_recovery() AS in_recovery, current_setting('transaction_read_only') = 'on' AS read_only`;

async function roleOf(client: pg.Client): Promise<SessionRole> {
  const { rows } = await client.query<{ in_recovery: boolean; read_only: boolean }>(ROLE_QUERY);
  return { inRecovery: rows[0].in_recovery, readOnly: rows[0].read_only };
}

/** Whether a server of `role` may serve sessions that ask for `attrs` (as libpq decides; prefer-standby is "standby" on the first pass). */
function accepts(attrs: TargetSessionAttrs, role: SessionRole): boolean {
  switch (attrs) {
    case 'any':
      return true;
    case 'read-write':
      return !role.readOnly && !role.inRecovery;
    case 'read-only':
      return role.readOnly || role.inRecovery;
    case 'primary':
      return !role.inRecovery;
    case 'standby':
    case 'prefer-standby':
      return role.inRecovery;
  }
}

/** Options of {@link HostListConnector}. */
export interface HostListConnectorOptions {
  /** How long one host may take to connect and answer the role query (ms, default 2000). */
  probeTimeoutMs?: number;
}

/**
 * Finds, and remembers, the host of a (possibly multi-host) URL that
 * satisfies its `target_session_attrs`, as libpq does: the first host in
 * the order given that qualifies, each connected and asked
 * `pg_is_in_recovery()` and `transaction_read_only` (all at once, unlike
 * libpq, so a frozen host delays the search by one timeout only);
 * `prefer-standby` falls back to any host when no standby answers. The chosen host is reused by every new connection until
 * {@link invalidate} (a connection to it failed, or it no longer qualifies),
 * after which the next connection searches again: after a switchover or a
 * failover the new primary is found by the first connection that needs
 * one. Concurrent searches share one.
 */
export class HostListConnector {
  readonly list: HostList;
  private chosen: number | undefined;
  private search: Promise<number> | undefined;
  /** Bumped each time the chosen host is dropped (so a connection made before knows it is stale). */
  private generationCount = 0;
  private readonly probeTimeoutMs: number;

  constructor(url: string, opts: HostListConnectorOptions = {}) {
    this.list = parseHostList(url);
    this.probeTimeoutMs = opts.probeTimeoutMs ?? 2000;
    if (this.list.hosts.length === 1 && this.list.targetSessionAttrs === 'any') this.chosen = 0;
  }

  /** True when connections must check their server's role (several hosts or target_session_attrs set). */
  get checksRole(): boolean {
    return this.list.targetSessionAttrs !== 'any';
  }

  /** Increases every time the chosen host is dropped. */
  get generation(): number {
    return this.generationCount;
  }

  /** `host:port` of the chosen host, or undefined while none is known. */
  get current(): string | undefined {
    if (this.chosen === undefined) return undefined;
    const h = this.list.hosts[this.chosen];
    return `${h.host}:${h.port}`;
  }

  /** The single-host URL of the host to connect to (searching for one when none is chosen). Rejects naming every host's failure. */
  async target(): Promise<{ url: string; index: number; generation: number }> {
    if (this.chosen === undefined) {
      this.search ??= this.find().finally(() => (this.search = undefined));
      this.chosen = await this.search;
    }
    return { url: this.list.urlFor(this.chosen), index: this.chosen, generation: this.generationCount };
  }

  /** Forgets the chosen host (if it is still `index`), so that the next connection searches again. */
  invalidate(index?: number): void {
    if (index !== undefined && index !== this.chosen) return;
    if (this.chosen === undefined) return;
    if (this.list.hosts.length === 1 && this.list.targetSessionAttrs === 'any') return;
    this.chosen = undefined;
    this.generationCount++;
  }

  /** Whether a connected session's server (asked on `client`) qualifies. */
  async qualifies(client: pg.Client): Promise<boolean> {
    return !this.checksRole || accepts(this.list.targetSessionAttrs, await roleOf(client));
  }

  /**
   * Asks every host at once (a frozen or unreachable one costs one probe
   * timeout, not one per host before it) and picks as libpq would: the
   * first qualifying host in the order given. For `read-write` and
   * `primary` the first host to qualify is taken as soon as it answers,
   * without waiting for the others (there is one primary; a frozen old
   * primary earlier in the list would otherwise delay every search after a
   * failover by a full timeout).
   */
  private async find(): Promise<number> {
    const attrs = this.list.targetSessionAttrs;
    const probes = this.list.hosts.map((_, i) => this.probe(i));
    if (attrs === 'read-write' || attrs === 'primary') {
      const first = await new Promise<number | undefined>((resolve) => {
        let left = probes.length;
        probes.forEach((p, i) =>
          void p.then((a) => {
            if (a.role !== undefined && accepts(attrs, a.role)) resolve(i);
            if (--left === 0) resolve(undefined);
          }),
        );
      });
      if (first !== undefined) return first;
    }
    const answers = await Promise.all(probes);
    const passes: TargetSessionAttrs[] = attrs === 'prefer-standby' ? ['standby', 'any'] : [attrs];
    for (const pass of passes) {
      const i = answers.findIndex((a) => a.role !== undefined && accepts(pass, a.role));
      if (i >= 0) return i;
    }
    const failures = answers.map((a, i) => {
      const h = this.list.hosts[i];
      const why = a.error ?? (a.role!.inRecovery ? 'a standby' : a.role!.readOnly ? 'read-only' : 'a primary');
      return `${h.host}:${h.port}: ${why}`;
    });
    throw new Error(`no host of ${this.list.display} is ${attrs === 'any' ? 'reachable' : `usable for target_session_attrs=${attrs}`} (${failures.join('; ')})`);
  }

  /** Connects to host `i` and asks its role; never throws. */
  private async probe(i: number): Promise<{ role?: SessionRole; error?: string }> {
    const client = new pg.Client({ connectionString: this.list.urlFor(i), connectionTimeoutMillis: this.probeTimeoutMs, query_timeout: this.probeTimeoutMs, application_name: 'plinth-host-search' });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return { role: await roleOf(client) };
    } catch (err) {
      return { error: (err as Error).message };
    } finally {
      void client.end().catch(() => undefined);
    }
  }
}

/**
 * Whether `url` needs the host list (several hosts, or a
 * `target_session_attrs` other than `any`); false for a URL this parser
 * does not take, which `pg` then parses as before. Pure; never throws.
 */
export function usesHostList(url: string): boolean {
  try {
    const l = parseHostList(url);
    return l.hosts.length > 1 || l.targetSessionAttrs !== 'any';
  } catch {
    return false;
  }
}

const connectors = new Map<string, HostListConnector>();

/** The process's one {@link HostListConnector} of `url` (shared by every pool and session on it, so one search serves all). */
export function hostListConnector(url: string): HostListConnector {
  let c = connectors.get(url);
  if (!c) {
    c = new HostListConnector(url);
    connectors.set(url, c);
  }
  return c;
}

/** A `pg.Client` config without a connection string: the caller's settings; the URL comes from the connector. */
export type SessionConfig = Omit<pg.ClientConfig, 'connectionString'>;

/**
 * Connects one session to the host of `url` its `target_session_attrs`
 * asks for (see {@link HostListConnector}). A host that refuses, or no
 * longer qualifies (a demoted primary), is dropped and the next host tried,
 * once around the list. Rejects naming each host's failure.
 */
export async function connectSession(url: string, config: SessionConfig = {}): Promise<pg.Client> {
  if (!usesHostList(url)) {
    const plain = new pg.Client({ ...config, connectionString: url });
    try {
      await plain.connect();
    } catch (err) {
      await plain.end().catch(() => undefined);
      throw err;
    }
    return plain;
  }
  const connector = hostListConnector(url);
  let lastError: unknown;
  for (let attempt = 0; attempt <= connector.list.hosts.length; attempt++) {
    const { url: single, index } = await connector.target();
    const client = new pg.Client({ ...config, connectionString: single });
    // The caller listens for 'error' once it has the session; until then a lost connection fails the role query instead.
    const swallow = () => undefined;
    client.on('error', swallow);
    try {
      await client.connect();
      if (await connector.qualifies(client)) {
        client.off('error', swallow);
        return client;
      }
      lastError = new Error(`${connector.list.hosts[index].host}:${connector.list.hosts[index].port} no longer qualifies for target_session_attrs=${connector.list.targetSessionAttrs}`);
    } catch (err) {
      lastError = err;
    }
    connector.invalidate(index);
    await client.end().catch(() => undefined);
  }
  throw lastError;
}

/**
 * A `pg.Client` for `pg.Pool` (its `Client` option) that connects to the
 * host its connector chooses: `pool.options.hostListUrl` names the URL.
 * When the host is gone or no longer qualifies, the connector forgets it
 * and this connection fails (the pool hands the error to the caller, as a
 * 503); the next connection searches the list again.
 */
export class HostListClient extends pg.Client {
  /** The host index this session is connected to and the connector's generation then. */
  hostIndex = -1;
  hostGeneration = -1;
  private readonly connector: HostListConnector;

  constructor(config: pg.ClientConfig & { hostListUrl: string }) {
    const connector = hostListConnector(config.hostListUrl);
    super({ ...config, connectionString: connector.list.urlFor(0) });
    this.connector = connector;
  }

  override connect(): Promise<pg.Client>;
  override connect(callback: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): void;
  override connect(callback?: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): Promise<pg.Client> | void {
    const run = async (): Promise<pg.Client> => {
      const { url, index, generation } = await this.connector.target();
      const h = this.connector.list.hosts[index];
      // Set before the first connect: pg reads host and port from these when it opens the socket.
      const self = this as unknown as { host: string; port: number; connectionParameters: { host: string; port: number } };
      void url;
      if (h.host !== '') {
        self.host = h.host;
        self.connectionParameters.host = h.host;
      }
      self.port = h.port;
      self.connectionParameters.port = h.port;
      this.hostIndex = index;
      this.hostGeneration = generation;
      try {
        await super.connect();
      } catch (err) {
        this.connector.invalidate(index);
        throw err;
      }
      let ok: boolean;
      // Until connect() returns, nobody listens for 'error' (pg-pool adds its listener then): a connection lost
      // during the role query would be an unhandled 'error' event, which ends the process. The query fails with it.
      const swallow = () => undefined;
      this.on('error', swallow);
      try {
        ok = await this.connector.qualifies(this);
      } catch (err) {
        this.connector.invalidate(index);
        await this.end().catch(() => undefined);
        throw err;
      } finally {
        this.off('error', swallow);
      }
      if (!ok) {
        this.connector.invalidate(index);
        await this.end().catch(() => undefined);
        throw new Error(`${h.host}:${h.port} is not usable for target_session_attrs=${this.connector.list.targetSessionAttrs} (it changed role); retry`);
      }
      return this;
    };
    if (!callback) return run();
    const cb = callback as (err: Error | null, c?: pg.Client) => void;
    run().then((c) => cb(null, c), (err: Error) => cb(err));
  }
}
