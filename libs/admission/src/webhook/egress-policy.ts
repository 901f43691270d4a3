import dns from 'node:dns';
import net from 'node:net';
import os from 'node:os';

/**
 * Where tenants' admission webhooks may be called (a platform setting): a
 * webhook `url` given by a tenant must not reach the server's own host —
 * loopback, unspecified (0.0.0.0, ::), link-local (169.254.0.0/16 holds
 * cloud metadata endpoints), multicast, or any address of the server's own
 * interfaces — and private ranges (RFC 1918, CGNAT, fc00::/7) are allowed
 * or refused by configuration. Checked when a configuration is written
 * (literal addresses and `localhost` names) and again at every call after
 * DNS resolution, connecting only to the checked address. Tenants listed
 * as trusted (the platform's own, for local development) may call
 * loopback and the server's own addresses; link-local stays refused.
 * Service references resolve through the operator's service map and are
 * not subject to the policy.
 */

/** Options of {@link WebhookEgressPolicy}. */
export interface EgressPolicyOptions {
  /** Whether private ranges may be called. Default true. */
  allowPrivateNetworks?: boolean;
  /** Tenants that may call loopback and the server's own addresses. */
  trustedTenants?: string[];
  /** The server's own addresses; default: every address of every interface. */
  ownAddresses?: string[];
}

/** Why an address is refused, for messages. */
export type EgressRefusal = 'loopback' | 'link-local' | 'unspecified' | 'multicast' | 'own address' | 'private';

/** The error a refused connection fails with (code EGRESS_REFUSED). */
export class EgressRefusedError extends Error {
  readonly code = 'EGRESS_REFUSED';
  constructor(readonly refusal: EgressRefusal) {
    super(`the webhook egress policy does not allow ${refusal === 'own address' ? "the server's own addresses" : `${refusal} addresses`}`);
  }
}

type Lookup = NonNullable<net.TcpNetConnectOpts['lookup']>;

function blockList(entries: Array<[string, number, 'ipv4' | 'ipv6']>): net.BlockList {
  const list = new net.BlockList();
  for (const [addr, prefix, family] of entries) list.addSubnet(addr, prefix, family);
  return list;
}

const LOOPBACK = blockList([['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']]);
const UNSPECIFIED = blockList([['0.0.0.0', 8, 'ipv4'], ['::', 128, 'ipv6']]);
const LINK_LOCAL = blockList([['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6']]);
const MULTICAST = blockList([['224.0.0.0', 4, 'ipv4'], ['255.255.255.255', 32, 'ipv4'], ['ff00::', 8, 'ipv6']]);
const PRIVATE = blockList([
  ['10.0.0.0', 8, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['fc00::', 7, 'ipv6'],
]);

/** `::ffff:127.0.0.1` → `127.0.0.1`; brackets removed; other addresses unchanged. */
function normalise(address: string): string {
  const a = address.replace(/^\[|\]$/g, '').toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  return mapped ? mapped[1] : a;
}

function interfaceAddresses(): string[] {
  return Object.values(os.networkInterfaces())
    .flat()
    .filter((i): i is os.NetworkInterfaceInfo => i !== undefined)
    .map((i) => normalise(i.address));
}

/** See the module comment. Immutable; safe to share. */
export class WebhookEgressPolicy {
  private readonly allowPrivate: boolean;
  private readonly trusted: Set<string>;
  private readonly own: Set<string>;

  constructor(opts: EgressPolicyOptions = {}) {
    this.allowPrivate = opts.allowPrivateNetworks ?? true;
    this.trusted = new Set(opts.trustedTenants ?? []);
    this.own = new Set((opts.ownAddresses ?? interfaceAddresses()).map(normalise));
  }

  /** True when `tenant` is exempt (loopback and own addresses allowed, detailed errors). */
  trusts(tenant: string): boolean {
    return this.trusted.has(tenant);
  }

  /** Why `tenant` may not connect to IP `address`; undefined when it may. */
  refusal(tenant: string, address: string): EgressRefusal | undefined {
    const a = normalise(address);
    const family = net.isIPv4(a) ? 'ipv4' : net.isIPv6(a) ? 'ipv6' : undefined;
    if (!family) return 'unspecified';
    if (LINK_LOCAL.check(a, family)) return 'link-local';
    if (MULTICAST.check(a, family)) return 'multicast';
    const trusted = this.trusts(tenant);
    if (!trusted && (LOOPBACK.check(a, family) || UNSPECIFIED.check(a, family))) return 'loopback';
    if (!trusted && this.own.has(a)) return 'own address';
    if (!this.allowPrivate && PRIVATE.check(a, family)) return 'private';
    return undefined;
  }

  /**
   * What can be told without DNS about a webhook URL's host: literal
   * addresses and `localhost` names. Undefined when nothing is wrong yet
   * (names are checked again after resolution, at call time).
   */
  hostRefusal(tenant: string, hostname: string): EgressRefusal | undefined {
    const h = normalise(hostname).replace(/\.$/, '');
    if (net.isIP(h)) return this.refusal(tenant, h);
    if (h === 'localhost' || h.endsWith('.localhost')) return this.trusts(tenant) ? undefined : 'loopback';
    return undefined;
  }

  /**
   * A `lookup` for net/tls connect that resolves a name and fails with
   * EgressRefusedError when any of its addresses is refused to `tenant`;
   * the connection then goes only to addresses it returned.
   */
  lookupFor(tenant: string): Lookup {
    const lookup = (hostname: string, options: dns.LookupOptions, callback: (...args: unknown[]) => void): void => {
      dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
        if (err) return callback(err);
        for (const a of addresses) {
          const refusal = this.refusal(tenant, a.address);
          if (refusal) return callback(new EgressRefusedError(refusal));
        }
        if (options.all) return callback(null, addresses);
        const first = addresses[0];
        if (!first) return callback(Object.assign(new Error(`lookup ${hostname}: no addresses`), { code: 'ENOTFOUND' }));
        callback(null, first.address, first.family);
      });
    };
    return lookup as unknown as Lookup;
  }
}
