import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { connectSession, HostListClient, hostListConnector, parseHostList, usesHostList } from '../host-list-connector.js';
import { checkSessionPooling } from '../session-pooling-check.js';

/** One wrapped data-key seed of a tenant, for one KMS key (`key_id`): a key generation. */
export interface TenantDataKey {
  /** Random and unique: what an encrypted object names as its data key (`encryptedDEKSource`). */
  ref: string;
  tenant: string;
  /** The KMS plugin's `key_id` that wrapped the seed. */
  keyId: string;
  /** The seed as the plugin's Encrypt returned it (never the seed itself). */
  wrapped: Buffer;
  /** The plugin's annotations of that Encrypt, given back to its Decrypt. */
  annotations: Record<string, Buffer>;
}

interface KeyRow {
  ref: string;
  tenant: string;
  key_id: string;
  wrapped: Buffer;
  annotations: Record<string, string>;
}

// The key store's only table; created by the store itself (it is not the object database, whose migrations do not reach it).
const SCHEMA = `
CREATE TABLE IF NOT EXISTS tenant_data_keys (
  ref text PRIMARY KEY,
  tenant text NOT NULL,
  key_id text NOT NULL,
  wrapped bytea NOT NULL,
  annotations jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant, key_id)
)`;

function toKey(r: KeyRow): TenantDataKey {
  return {
    ref: r.ref,
    tenant: r.tenant,
    keyId: r.key_id,
    wrapped: r.wrapped,
    annotations: Object.fromEntries(Object.entries(r.annotations ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  };
}

/**
 * The tenants' data keys (KMS v2 seeds, wrapped by the plugin), in a
 * PostgreSQL database of their own, never the object database: a backup of
 * the objects does not carry the keys, so destroying a tenant's keys here
 * makes its objects unreadable in every such backup (crypto-erasure).
 * Platform-wide, not per shard: a tenant moved to another shard keeps its
 * keys. Every statement is its own transaction, committed synchronously.
 */
export class TenantKeyStore {
  private constructor(private readonly pool: pg.Pool) {}

  /**
   * Connects to the key store at `url`, creating its database (through
   * `adminUrl`, a database on the same server, usually the object
   * database) when it does not exist, and its table. Either URL may name
   * several hosts with `target_session_attrs`, as the object database's
   * do (host-list-connector.ts): every session goes to the host that
   * qualifies, found again after a failover. Throws the driver's error when
   * the server cannot be reached or the database created, and a
   * SessionPoolingError behind a pooler in transaction mode (each session
   * must commit synchronously, a session setting).
   */
  static async open(url: string, adminUrl: string, maxConnections = 5): Promise<TenantKeyStore> {
    try {
      await TenantKeyStore.ensureDatabase(url, adminUrl);
      await checkSessionPooling(url);
    } catch (err) {
      throw new Error(`key store ${redact(url)}: ${(err as Error).message}`);
    }
    const multiHost = usesHostList(url);
    const pool = new pg.Pool({
      ...(multiHost ? { Client: HostListClient as unknown as typeof pg.Client, hostListUrl: url } : {}),
      connectionString: multiHost ? hostListConnector(url).list.urlFor(0) : url,
      max: maxConnections,
      connectionTimeoutMillis: 5000,
      // A destroyed key must stay destroyed after a crash: every session commits synchronously, whatever the server's
      // default. A SET, not the `options` start-up parameter, which PgBouncer refuses.
      onConnect: async (client) => {
        await client.query('SET synchronous_commit = on');
      },
    });
    pool.on('error', () => undefined);
    await pool.query(SCHEMA);
    return new TenantKeyStore(pool);
  }

  private static async ensureDatabase(url: string, adminUrl: string): Promise<void> {
    try {
      const probe = await connectSession(url);
      await probe.end().catch(() => undefined);
      return;
    } catch (err) {
      // 3D000: the database does not exist yet (through a host list: the search names it, for every host).
      const missing = (err as { code?: string }).code === '3D000' || (err as Error).message.includes(`database "${parseHostList(url).database}" does not exist`);
      if (!missing) throw err;
    }
    const name = parseHostList(url).database;
    const admin = await connectSession(adminUrl);
    try {
      await admin.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
    } catch (err) {
      // 42P04: another replica created it first.
      if ((err as { code?: string }).code !== '42P04') throw err;
    } finally {
      await admin.end();
    }
  }

  /** The tenant's key for `keyId`, or undefined when it has none yet (or it was destroyed). Reads only. */
  async current(tenant: string, keyId: string): Promise<TenantDataKey | undefined> {
    const { rows } = await this.pool.query<KeyRow>(`SELECT ref, tenant, key_id, wrapped, annotations FROM tenant_data_keys WHERE tenant = $1 AND key_id = $2`, [tenant, keyId]);
    return rows[0] && toKey(rows[0]);
  }

  /**
   * Stores a new key generation for the tenant unless one for the same
   * `keyId` exists (another replica stored it first); returns the one that
   * is stored, which callers must use. Mutates; one statement.
   */
  async add(key: Omit<TenantDataKey, 'ref'>): Promise<TenantDataKey> {
    const annotations = Object.fromEntries(Object.entries(key.annotations).map(([k, v]) => [k, v.toString('base64')]));
    await this.pool.query(
      `INSERT INTO tenant_data_keys (ref, tenant, key_id, wrapped, annotations) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (tenant, key_id) DO NOTHING`,
      [randomUUID(), key.tenant, key.keyId, key.wrapped, JSON.stringify(annotations)],
    );
    const stored = await this.current(key.tenant, key.keyId);
    if (!stored) throw new Error(`the data key of tenant "${key.tenant}" was destroyed while it was being created`);
    return stored;
  }

  /** The key an object names, or undefined when it is gone (its tenant was deleted). Reads only. */
  async byRef(ref: string): Promise<TenantDataKey | undefined> {
    const { rows } = await this.pool.query<KeyRow>(`SELECT ref, tenant, key_id, wrapped, annotations FROM tenant_data_keys WHERE ref = $1`, [ref]);
    return rows[0] && toKey(rows[0]);
  }

  /** Destroys every key generation of the tenant; returns how many. Mutates; idempotent. */
  async destroyTenant(tenant: string): Promise<number> {
    const r = await this.pool.query(`DELETE FROM tenant_data_keys WHERE tenant = $1`, [tenant]);
    return r.rowCount ?? 0;
  }

  /** How many key generations the tenant has (0 once destroyed). Reads only. */
  async count(tenant: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>(`SELECT count(*) AS n FROM tenant_data_keys WHERE tenant = $1`, [tenant]);
    return Number(rows[0].n);
  }

  /** Closes the pool. */
  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** The URL without its password, for messages (`user@h1:p1,h2:p2/db` for one naming several hosts). */
function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    try {
      const user = /^postgres(?:ql)?:\/\/([^:@/]*)[^@/]*@/.exec(url)?.[1];
      return `${user ? `${decodeURIComponent(user)}@` : ''}${parseHostList(url).display}`;
    } catch {
      return '(unparsable URL)';
    }
  }
}

/**
 * The key store's URL beside an object database: the same server (or
 * servers, for a URL naming several hosts), the database's name with
 * `_keys` appended, every other part kept.
 */
export function defaultKeyStoreUrl(objectDbUrl: string): string {
  if (!usesHostList(objectDbUrl)) {
    const u = new URL(objectDbUrl);
    const name = decodeURIComponent(u.pathname.slice(1)) || 'postgres';
    u.pathname = `/${encodeURIComponent(`${name}_keys`)}`;
    return u.toString();
  }
  const m = /^(postgres(?:ql)?:\/\/[^/?#]*)(\/[^?#]*)?(\?[^#]*)?$/.exec(objectDbUrl);
  if (!m) throw new Error('invalid PostgreSQL URL');
  const name = parseHostList(objectDbUrl).database;
  return `${m[1]}/${encodeURIComponent(`${name}_keys`)}${m[3] ?? ''}`;
}
