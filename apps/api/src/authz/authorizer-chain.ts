import type { AuthorizationAttributes, AuthorizationDecision, Authorizer } from '@plinth/apimachinery';
import type { AuthorizationMetrics } from './authorization-metrics.js';
import { type NamedAuthorizer, unionAuthorize } from './authorizer-union.js';
import type { AuthorizerEntry } from './config/authorization-configuration.js';
import type { RbacAuthorizer } from './rbac-authorizer.js';

/**
 * The authorizer every request, access review and admission check asks (the
 * injection token of the chain in force): `authorize` and whether a group
 * is privileged (`system:masters`, upstream's EscalationAllowed).
 */
export abstract class RequestAuthorizer implements Authorizer {
  abstract authorize(attrs: AuthorizationAttributes): AuthorizationDecision | Promise<AuthorizationDecision>;
  abstract isPrivileged(groups: string[]): boolean;
}

/** Upstream's AlwaysAllow. */
const ALWAYS_ALLOW: Authorizer = { authorize: () => ({ allowed: true }) };
/** Upstream's AlwaysDeny: no opinion (so an authorizer after it may still allow), with its reason. */
const ALWAYS_DENY: Authorizer = { authorize: () => ({ allowed: false, noOpinion: true, reason: 'Everything is forbidden.' }) };

/** The authorizers of a chain built from the file's entries: RBAC is `rbac`; webhooks are built by `webhook`. */
export function chainEntries(config: readonly AuthorizerEntry[], rbac: RbacAuthorizer, webhook: (e: Extract<AuthorizerEntry, { type: 'Webhook' }>) => Authorizer): NamedAuthorizer[] {
  return config.map((e) => {
    switch (e.type) {
      case 'RBAC':
        return { type: e.type, name: e.name, authorizer: rbac };
      case 'AlwaysAllow':
        return { type: e.type, name: e.name, authorizer: ALWAYS_ALLOW };
      case 'AlwaysDeny':
        return { type: e.type, name: e.name, authorizer: ALWAYS_DENY };
      case 'Webhook':
        return { type: e.type, name: e.name, authorizer: webhook(e) };
    }
  });
}

/**
 * kube-apiserver's authorizer: the privileged group (`system:masters`:
 * everything, everywhere, before anything else is asked), then the
 * platform's chain (PLINTH_AUTHORIZATION_CONFIG, by default RBAC alone),
 * then, for a request no platform authorizer decided, `tail` (the
 * addressed tenant's own webhooks). The chain is swapped whole by
 * {@link replace} (a reload); a request sees one chain. Synchronous while
 * every authorizer asked answers synchronously.
 */
export class AuthorizerChain extends RequestAuthorizer {
  private entries: readonly NamedAuthorizer[];

  constructor(
    private readonly rbac: RbacAuthorizer,
    entries: readonly NamedAuthorizer[],
    private readonly tail?: NamedAuthorizer,
    private readonly metrics?: AuthorizationMetrics,
  ) {
    super();
    this.entries = tail ? [...entries, tail] : entries;
  }

  /** The platform's authorizers in force, in order (the tenants' webhooks left out). */
  get platform(): readonly NamedAuthorizer[] {
    return this.tail ? this.entries.slice(0, -1) : this.entries;
  }

  /** Puts `entries` in force for the requests that start from now on. */
  replace(entries: readonly NamedAuthorizer[]): void {
    this.entries = this.tail ? [...entries, this.tail] : entries;
  }

  authorize(attrs: AuthorizationAttributes): AuthorizationDecision | Promise<AuthorizationDecision> {
    if (this.rbac.isPrivileged(attrs.user.groups)) return { allowed: true };
    return unionAuthorize(attrs, this.entries, this.count);
  }

  /** The decision counters of each authorizer, bound once (labelling a counter per request costs more than the RBAC decision). */
  private readonly counters = new WeakMap<NamedAuthorizer, { allowed: { inc(): void }; denied: { inc(): void } }>();

  private readonly count = (e: NamedAuthorizer, d: AuthorizationDecision): void => {
    if (!this.metrics) return;
    let c = this.counters.get(e);
    if (!c) {
      c = { allowed: this.metrics.decisions.labels(e.type, e.name, 'allowed'), denied: this.metrics.decisions.labels(e.type, e.name, 'denied') };
      this.counters.set(e, c);
    }
    (d.allowed ? c.allowed : c.denied).inc();
  };

  isPrivileged(groups: string[]): boolean {
    return this.rbac.isPrivileged(groups);
  }
}
