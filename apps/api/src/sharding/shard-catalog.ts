import { DEFAULT_SHARD } from '@plinth/storage';
import { isPlainObject, type KubeObject } from '@plinth/apimachinery';

export { SHARD_STORAGE_RESOURCE } from '../kinds/shard/shard-api.js';

/** What the platform knows of one Shard object. */
export interface ShardSpecView {
  name: string;
  /** The Secret holding the connection URL; undefined for the default shard (the platform's own database). */
  secret?: { namespace: string; name: string; key: string; readReplicaKey?: string };
  unschedulable: boolean;
  /** Stored bytes of its tenants' objects, as its status last reported. */
  bytes: number;
}

/** The Secret reference of a Shard object (key `url` when unset); undefined when it names none. Pure. */
export function secretRefOf(o: KubeObject): ShardSpecView['secret'] {
  const spec = isPlainObject(o.spec) ? o.spec : {};
  const ref = isPlainObject(spec.secretRef) ? spec.secretRef : undefined;
  if (!ref || typeof ref.name !== 'string' || ref.name === '') return undefined;
  const readReplicaKey = typeof ref.readReplicaKey === 'string' && ref.readReplicaKey ? ref.readReplicaKey : undefined;
  return { name: ref.name, namespace: typeof ref.namespace === 'string' && ref.namespace ? ref.namespace : 'default', key: typeof ref.key === 'string' && ref.key ? ref.key : 'url', ...(readReplicaKey ? { readReplicaKey } : {}) };
}

/** The catalog's view of a Shard object. Pure. */
export function shardView(o: KubeObject): ShardSpecView {
  const spec = isPlainObject(o.spec) ? o.spec : {};
  const status = isPlainObject(o.status) ? o.status : {};
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  return { name: o.metadata.name!, secret: secretRefOf(o), unschedulable: spec.unschedulable === true, bytes: num(status.bytes) };
}

/**
 * Every replica's copy of the Shard objects (kept by the ShardRegistry
 * from their change stream): what placement and admission read without a
 * query. The default shard is always there, even before its object is
 * written.
 */
export class ShardCatalog {
  private readonly shards = new Map<string, ShardSpecView>([[DEFAULT_SHARD, { name: DEFAULT_SHARD, unschedulable: false, bytes: 0 }]]);

  /** Records a Shard object as it is now. */
  put(view: ShardSpecView): void {
    this.shards.set(view.name, view);
  }

  /** Forgets a deleted Shard object (the default shard stays). */
  delete(name: string): void {
    if (name !== DEFAULT_SHARD) this.shards.delete(name);
  }

  /** One shard, or undefined when no Shard object has that name. */
  get(name: string): ShardSpecView | undefined {
    return this.shards.get(name);
  }

  /** Every known shard. */
  all(): ShardSpecView[] {
    return [...this.shards.values()];
  }

  /** The shards whose objects reference the Secret `namespace/name`. */
  usingSecret(namespace: string, name: string): string[] {
    return this.all()
      .filter((s) => s.secret && s.secret.namespace === namespace && s.secret.name === name)
      .map((s) => s.name);
  }
}
