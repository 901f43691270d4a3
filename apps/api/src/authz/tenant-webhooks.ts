import type { WebhookEgressPolicy } from '@plinth/admission';
import { ApiError, type AuthorizationAttributes, type AuthorizationDecision, type Authorizer, type FieldError, isPlainObject, type KubeObject, TENANT_EXTRA_KEY } from '@plinth/apimachinery';
import { type ChangeObserver, type Storage, TenantSnapshots } from '@plinth/storage';
import type { Logger } from 'pino';
import { validateWebhookSettings } from '../kinds/authorization/authorization-webhook-settings.js';
import { TENANT_AUTHORIZATION_WEBHOOK_STORAGE_RESOURCE } from '../kinds/authorization/tenant-authorization-webhook.resource.js';
import type { AuthorizationMetrics } from './authorization-metrics.js';
import { type NamedAuthorizer, unionAuthorize } from './authorizer-union.js';
import { SarClient } from './webhook/sar-client.js';
import { WebhookAuthorizer } from './webhook/webhook-authorizer.js';

/** What the tenants' webhooks need. */
export interface TenantWebhooksDeps {
  lists: Storage;
  egress: WebhookEgressPolicy;
  metrics?: AuthorizationMetrics;
  logger: Logger;
}

interface TenantHook {
  /** uid and resourceVersion: the same object keeps its authorizer (its cache and connections). */
  version: string;
  entry: NamedAuthorizer;
  close(): Promise<void>;
}

/** A tenant's webhook sees only its own tenant among the tenants a credential names (never which others a user belongs to). */
function ownTenantOnly(extra: Record<string, string[]>, tenant: string): Record<string, string[]> {
  const claims = extra[TENANT_EXTRA_KEY];
  if (!claims) return extra;
  const { [TENANT_EXTRA_KEY]: _drop, ...rest } = extra;
  return claims.includes(tenant) ? { ...rest, [TENANT_EXTRA_KEY]: [tenant] } : rest;
}

/**
 * The tenants' own webhook authorizers (TenantAuthorizationWebhook objects),
 * the last link of the chain: asked, in name order, about a request into
 * their tenant that no platform authorizer decided. Each tenant's objects
 * are read once and kept current by the change stream (attach
 * {@link observer} to their changes), so an object written is in force for
 * the writer's next request. Calls are held to the platform's webhook
 * egress policy for the tenant. An object that no longer validates (a CEL
 * library change) is skipped and logged. Answers synchronously when the
 * tenant has none or its webhooks answer from their caches.
 */
export class TenantWebhooks implements Authorizer {
  private readonly snapshots: TenantSnapshots<{ hooks: TenantHook[] }>;
  /** Tenants whose snapshot a change outdated, with the number of that change: cleared once a read that started after it is in. */
  private readonly outdated = new Map<string, number>();
  private changes = 0;

  constructor(private readonly deps: TenantWebhooksDeps) {
    this.snapshots = new TenantSnapshots({
      load: (tenant) => this.load(tenant),
      onError: (err, tenant) => deps.logger.warn({ tenant, err: (err as Error).message }, 'tenant authorization webhooks could not be read'),
    });
  }

  /** Feed for the change stream of TenantAuthorizationWebhooks. */
  readonly observer: ChangeObserver = {
    onChange: (change) => {
      this.outdated.set(change.key.tenant, ++this.changes);
      this.snapshots.observer.onChange(change);
    },
    onReset: () => {
      for (const t of this.snapshots.tenants()) this.outdated.set(t, ++this.changes);
      this.snapshots.observer.onReset();
    },
    onTenantRetired: (tenant) => {
      // Its snapshot is dropped: the next request reads afresh anyway.
      this.outdated.delete(tenant);
      for (const h of this.snapshots.peek(tenant)?.hooks ?? []) void h.close();
      this.snapshots.observer.onTenantRetired?.(tenant);
    },
  };

  authorize(attrs: AuthorizationAttributes): AuthorizationDecision | Promise<AuthorizationDecision> {
    const tenant = attrs.tenant;
    const mark = this.outdated.get(tenant);
    const current = mark === undefined ? this.snapshots.peek(tenant) : undefined;
    if (current) return this.decide(attrs, current.hooks);
    // Concurrent requests share the read (TenantSnapshots); until it is in, they all wait for it rather than peek.
    return this.snapshots.get(tenant).then(
      (s) => {
        if (this.outdated.get(tenant) === mark) this.outdated.delete(tenant);
        return this.decide(attrs, s.hooks);
      },
      () => {
        throw ApiError.serviceUnavailable('authorization is unavailable: the tenant\'s authorization webhooks could not be read, try again later');
      },
    );
  }

  private decide(attrs: AuthorizationAttributes, hooks: TenantHook[]): AuthorizationDecision | Promise<AuthorizationDecision> {
    if (hooks.length === 0) return { allowed: false, noOpinion: true };
    return unionAuthorize(
      attrs,
      hooks.map((h) => h.entry),
      this.deps.metrics ? (_e, d) => this.deps.metrics!.decisions.inc({ type: 'Webhook', name: 'tenant', decision: d.allowed ? 'allowed' : 'denied' }) : undefined,
    );
  }

  /** Reads the tenant's objects, keeping the authorizers of those unchanged and closing those of the others. */
  private async load(tenant: string): Promise<{ hooks: TenantHook[] }> {
    const page = await this.deps.lists.list({ tenant, resource: TENANT_AUTHORIZATION_WEBHOOK_STORAGE_RESOURCE });
    const previous = new Map((this.snapshots.peek(tenant)?.hooks ?? []).map((h) => [h.version, h]));
    const hooks: TenantHook[] = [];
    for (const item of page.items) {
      const obj = item.body as KubeObject;
      const version = `${obj.metadata.uid}/${obj.metadata.resourceVersion}`;
      const kept = previous.get(version);
      if (kept) {
        previous.delete(version);
        hooks.push(kept);
        continue;
      }
      const built = this.build(tenant, obj, version);
      if (built) hooks.push(built);
    }
    for (const gone of previous.values()) void gone.close();
    return { hooks };
  }

  private build(tenant: string, obj: KubeObject, version: string): TenantHook | undefined {
    const spec = isPlainObject(obj.spec) ? obj.spec : {};
    const errors: FieldError[] = [];
    const settings = validateWebhookSettings(spec, 'spec', errors);
    const cc = isPlainObject(spec.clientConfig) ? spec.clientConfig : {};
    let url: URL | undefined;
    try {
      url = new URL(String(cc.url));
    } catch {
      url = undefined;
    }
    if (!settings || !url) {
      this.deps.logger.warn({ tenant, name: obj.metadata.name ?? '', errors }, 'tenant authorization webhook skipped: it does not validate');
      return undefined;
    }
    const ca = typeof cc.caBundle === 'string' && cc.caBundle ? Buffer.from(cc.caBundle, 'base64').toString('utf8') : undefined;
    const client = new SarClient({ url, ca }, { policy: this.deps.egress, tenant });
    const name = obj.metadata.name ?? '';
    const authorizer = new WebhookAuthorizer({ name, connection: { url, ca }, ...settings }, { client, metrics: this.deps.metrics, metricName: 'tenant', redactExtra: ownTenantOnly });
    return { version, entry: { type: 'Webhook', name, authorizer }, close: () => authorizer.close() };
  }

  /** Closes every webhook's connections (shutdown). */
  async close(): Promise<void> {
    const all = this.snapshots.tenants().flatMap((t) => this.snapshots.peek(t)?.hooks ?? []);
    await Promise.all(all.map((h) => h.close()));
  }
}
