import type { RedisOptions } from 'ioredis';

/** One Sentinel of a `redis+sentinel://` URL. */
export interface SentinelHost {
  host: string;
  port: number;
}

/**
 * A parsed REDIS_URL: a Redis server (`redis://`, `rediss://`) or a master
 * found through Sentinels (`redis+sentinel://`, `rediss+sentinel://`).
 */
export interface RedisTarget {
  /** `direct`: one server; `sentinel`: the master of `masterName`, asked of `sentinels`. */
  kind: 'direct' | 'sentinel';
  /** `host:port[/db]` or `master "name" via Sentinels h1:p1,h2:p2[/db]`: never the credentials. */
  display: string;
  /** Sentinel only: the master group name (`sentinel monitor <name> …`). */
  masterName?: string;
  sentinels: SentinelHost[];
  /** The connection settings, in the form ioredis and BullMQ accept. */
  options: RedisOptions;
}

/** The Sentinel port when a host names none (Redis' default). */
export const SENTINEL_PORT = 26379;

const SENTINEL_PARAMS = ['sentinel_username', 'sentinel_password'];

/**
 * Parses REDIS_URL. Besides `redis[s]://[[user]:password@]host[:port][/db]`
 * it takes the Sentinel form of Python's Redis-Sentinel-Url (also Prefect's
 * and RedisVL's):
 * `redis[s]+sentinel://[[user]:password@]host[:port][,host[:port]...]/<master name>[/db][?sentinel_username=…&sentinel_password=…]`;
 * the credentials in front are the data nodes', the query's the Sentinels',
 * a host without a port is on 26379, and `rediss+sentinel` speaks TLS to
 * both. Throws an Error naming what is wrong (never the password). Pure.
 */
export function parseRedisUrl(url: string): RedisTarget {
  const sentinel = /^(rediss?)\+sentinel:\/\/([^@/?#]*@)?([^/?#]*)(\/[^?#]*)?(\?[^#]*)?$/i.exec(url);
  if (sentinel) return parseSentinelUrl(sentinel[1].toLowerCase() === 'rediss', sentinel[2] ?? '', sentinel[3], sentinel[4] ?? '', sentinel[5] ?? '');
  if (!/^rediss?:\/\//i.test(url)) throw new Error('expected redis://, rediss://, redis+sentinel:// or rediss+sentinel://');
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error('invalid Redis URL (expected redis://[credentials@]host[:port][/db])');
  }
  if (!u.hostname) throw new Error('the Redis URL names no host');
  const db = parseDb(u.pathname.slice(1));
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const port = u.port ? Number(u.port) : 6379;
  return {
    kind: 'direct',
    display: `${u.hostname}:${port}${db ? `/${db}` : ''}`,
    sentinels: [],
    options: {
      host,
      port,
      ...credentials(u.username, u.password),
      db,
      tls: u.protocol.toLowerCase() === 'rediss:' ? {} : undefined,
    },
  };
}

function parseSentinelUrl(tls: boolean, auth: string, authority: string, path: string, query: string): RedisTarget {
  const form = 'redis+sentinel://[credentials@]host[:port][,host[:port]...]/<master name>[/db]';
  if (authority === '') throw new Error(`the Sentinel URL names no Sentinel (expected ${form})`);
  const sentinels = authority.split(',').map(splitSentinel);
  const parts = path.split('/').slice(1);
  if (parts.length === 0 || parts[0] === '') throw new Error(`the Sentinel URL names no master (expected ${form})`);
  if (parts.length > 2 || (parts.length === 2 && parts[1] === '')) throw new Error(`the Sentinel URL's path must be /<master name>[/db] (expected ${form})`);
  const masterName = decode(parts[0], 'master name');
  const db = parseDb(parts[1] ?? '');
  const params = new URLSearchParams(query.slice(1));
  for (const key of params.keys()) {
    if (!SENTINEL_PARAMS.includes(key)) throw new Error(`unknown Sentinel URL option "${key}" (known: ${SENTINEL_PARAMS.join(', ')})`);
  }
  const colon = auth.slice(0, -1).indexOf(':');
  const [user, password] = auth === '' ? ['', ''] : colon < 0 ? [auth.slice(0, -1), ''] : [auth.slice(0, colon), auth.slice(colon + 1, -1)];
  const hosts = sentinels.map((s) => `${s.host.includes(':') ? `[${s.host}]` : s.host}:${s.port}`).join(',');
  return {
    kind: 'sentinel',
    display: `master "${masterName}" via Sentinels ${hosts}${db ? `/${db}` : ''}`,
    masterName,
    sentinels,
    options: {
      sentinels,
      name: masterName,
      ...credentials(user, password),
      sentinelUsername: params.get('sentinel_username') ?? undefined,
      sentinelPassword: params.get('sentinel_password') ?? undefined,
      db,
      tls: tls ? {} : undefined,
      enableTLSForSentinelMode: tls,
      sentinelTLS: tls ? {} : undefined,
      // Not ioredis' failover detector: a +switch-master arriving while a connection is being re-established ends
      // that client for good (ioredis 6.0, status "end"). A failover closes the clients of the old master anyway
      // (SIGKILL, or Sentinel's CLIENT KILL when it demotes it), and they reconnect through the Sentinels.
      failoverDetector: false,
    },
  };
}

function splitSentinel(part: string): SentinelHost {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::(\d+))?$/.exec(part);
  if (!m) throw new Error(`invalid Sentinel "${part}" (expected host[:port])`);
  const port = m[3] ? Number(m[3]) : SENTINEL_PORT;
  if (port < 1 || port > 65535) throw new Error(`invalid port ${port} of Sentinel "${part}"`);
  return { host: decode(m[1] ?? m[2], 'host'), port };
}

function parseDb(text: string): number {
  if (text === '') return 0;
  if (!/^\d{1,5}$/.test(text)) throw new Error(`invalid Redis database "${text}" (a number)`);
  return Number(text);
}

function decode(text: string, what: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new Error(`invalid percent-encoding in the ${what} of the Redis URL`);
  }
}

function credentials(user: string, password: string): Pick<RedisOptions, 'username' | 'password'> {
  return { username: user ? decode(user, 'user name') : undefined, password: password ? decode(password, 'password') : undefined };
}
