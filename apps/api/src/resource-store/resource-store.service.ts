import type { TenantValidationBudget } from '../admission/validation-budget.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { AdmissionAttributes, AdmissionChain, AdmissionOperation } from '@plinth/admission';
import { isStorageError, type ObjectKey, type Storage, type StoredObject } from '@plinth/storage';
import { ApiError, cloneJsonValue, type FieldError, fieldErrors, isPlainObject, type KubeObject, rfc3339Now, validateObjectMeta, validateObjectMetaUpdate } from '@plinth/apimachinery';
import { fromStorageForm, groupVersion, objectKey, type ResourceDefinition, type ResourceStrategy, servedForm, type StrategyContext, toStorageForm } from '../registry/resource-definition.js';
import { strategyContext, type StrategyEnvironment } from '../registry/strategy-context.js';
import { guardManagedFields, ignoreTimestampOnlyChanges, managedFieldsBefore, trackWrite } from './field-tracking.js';
import { mapStorageError } from './storage-errors.mapper.js';
import { StoreHooks } from './store-hooks.js';
import type { WriteContext } from './write-context.js';

/**
 * Resolves once this replica serves a committed write of `key` at
 * `revision` (its change stream has applied it, and for CRDs the names
 * were accepted or refused); bounded, it resolves rather than hangs.
 */
export type CommitBarrier = (def: ResourceDefinition, key: ObjectKey, revision: number) => Promise<unknown>;

/** Turns the current object into the desired one; may throw ApiError. Must not mutate `current`. */
export type UpdateTransform = (current: KubeObject) => KubeObject;

/** What the generic store is built with besides storage, admission and hooks. */
export interface StoreOptions {
  /** What a committed write of a kind every replica caches waits for before it is answered (read-your-writes). */
  barrier?: CommitBarrier;
  /** Each tenant's share of validation time for custom resources (CEL rules, patterns); unlimited when absent. */
  validationBudget?: TenantValidationBudget;
  /** What strategies consult (the tenant's kinds, feature gates). */
  strategyEnvironment: StrategyEnvironment;
}

/**
 * How long an update retries after conflicting writes (upstream's
 * GuaranteedUpdate retries until the request ends): with many writers of
 * one object a writer may lose a round to each of them, so the bound is a
 * time, not a count.
 */
const UPDATE_RETRY_MS = 20_000;
const GENERATE_NAME_ATTEMPTS = 8;
const NAME_SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** Deep copy of a JSON value (see cloneJsonValue: plain JSON is walked, not serialised). Pure. */
export function cloneJson<T>(v: T): T {
  return cloneJsonValue(v);
}

function randomSuffix(): string {
  const bytes = randomBytes(5);
  return [...bytes].map((b) => NAME_SUFFIX_ALPHABET[b % NAME_SUFFIX_ALPHABET.length]).join('');
}

/**
 * The generic store: create and guaranteed update for every kind, calling
 * the kind's strategy, metadata validation and the admission chain in
 * upstream's order (mutating admission → strategy/validation → validating
 * admission → storage). Storage is skipped on dry run.
 */
export class ResourceStoreService {
  private readonly barrier: CommitBarrier | undefined;
  private readonly validationBudget: TenantValidationBudget | undefined;
  private readonly strategyEnvironment: StrategyEnvironment;

  /** `hooks` are the kinds' hooks (after-write, deletion, settled); see {@link StoreOptions} for the rest. */
  constructor(
    private readonly objects: Storage,
    private readonly admission: AdmissionChain,
    private readonly hooks: StoreHooks = new StoreHooks(),
    options: StoreOptions,
  ) {
    this.barrier = options.barrier;
    this.validationBudget = options.validationBudget;
    this.strategyEnvironment = options.strategyEnvironment;
  }

  /** After a committed write of `key` at `revision`: for kinds every replica caches, waits for the barrier. Never throws for a slow stream. */
  async synced(def: ResourceDefinition, key: ObjectKey, revision: number): Promise<void> {
    if (def.cachedOnEveryReplica && this.barrier) await this.barrier(def, key, revision);
  }

  /** The storage key of an object of `def`. */
  static key(tenant: string, def: ResourceDefinition, namespace: string, name: string): ObjectKey {
    return objectKey(tenant, def, namespace, name);
  }

  /** Reads one object, or throws ApiError NotFound. */
  async get(tenant: string, def: ResourceDefinition, namespace: string, name: string): Promise<StoredObject> {
    const found = await this.objects.get(ResourceStoreService.key(tenant, def, namespace, name));
    if (!found) throw ApiError.notFound({ group: def.group, kind: def.resource, name });
    return found;
  }

  /**
   * Creates `input` (owned by the store afterwards: it is mutated) in
   * upstream's order: mutating admission sees the object as decoded; then
   * the name is generated, system fields are filled and the strategy
   * prepares the object (BeforeCreate); then validation; then validating
   * admission on a copy; then storage. Returns the stored object, or on dry
   * run the object as it would be stored.
   */
  async create(ctx: WriteContext, input: KubeObject): Promise<KubeObject> {
    const { def } = ctx;
    const obj = this.typeAndNamespace(ctx, input);
    trackWrite(ctx, obj, null);
    await this.runMutating(ctx, 'CREATE', obj, null);
    this.typeAndNamespace(ctx, obj);
    // As upstream's store, the name is generated after mutating admission: webhooks see name "".
    const generate = !obj.metadata.name && typeof obj.metadata.generateName === 'string' && obj.metadata.generateName !== '';
    if (generate) obj.metadata.name = `${obj.metadata.generateName}${randomSuffix()}`;
    this.fillSystemFields(ctx, obj);
    const sctx = await this.strategyContext(ctx);
    this.applyStrategyForCreate(def.strategy, obj, sctx);
    await this.validateCreate(ctx, obj, sctx);
    await this.runValidating(ctx, 'CREATE', cloneJson(obj), null);
    if (ctx.dryRun) return obj;
    for (let attempt = 0; ; attempt++) {
      // Stored in the storage version (a CRD conversion webhook may be called); answered in the request's.
      const body = await toStorageForm(def, obj);
      let created: KubeObject;
      try {
        const stored = await this.objects.create(ResourceStoreService.key(ctx.tenant, def, ctx.namespace, obj.metadata.name!), body);
        await this.synced(def, stored.key, stored.revision);
        const hook = this.hooks.createdHook(def.storageResource);
        created = hook ? await hook(ctx, stored.body as KubeObject) : (stored.body as KubeObject);
      } catch (err) {
        if (generate && isStorageError(err, 'AlreadyExists') && attempt < GENERATE_NAME_ATTEMPTS) {
          obj.metadata.name = `${obj.metadata.generateName}${randomSuffix()}`;
          continue;
        }
        mapStorageError(err, def, obj.metadata.name!);
      }
      return servedForm(def, created);
    }
  }

  /** Sets apiVersion and kind and checks the object's namespace against the request's (before and after mutating admission). Mutates `obj`. */
  private typeAndNamespace(ctx: WriteContext, obj: KubeObject): KubeObject {
    const { def } = ctx;
    if (!isPlainObject(obj.metadata)) obj.metadata = {};
    const meta = obj.metadata;
    if (def.namespaced) {
      if (meta.namespace && meta.namespace !== ctx.namespace) {
        throw ApiError.badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      meta.namespace = ctx.namespace;
    } else {
      delete meta.namespace;
    }
    obj.apiVersion = groupVersion(def);
    obj.kind = def.kind;
    return obj;
  }

  /** Upstream's FillObjectMetaSystemFields plus what a create may not carry. Mutates `obj`. */
  private fillSystemFields(ctx: WriteContext, obj: KubeObject): void {
    const meta = obj.metadata;
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339Now();
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.selfLink;
    if (ctx.def.tracksGeneration) meta.generation = 1;
    else delete meta.generation;
  }

  /** The StrategyContext of one write (loads the tenant's own feature gates when needed). */
  private strategyContext(ctx: WriteContext): Promise<StrategyContext> {
    return strategyContext(this.strategyEnvironment, ctx.tenant).then((sctx) => ({ ...sctx, user: ctx.user }));
  }

  private applyStrategyForCreate(strategy: ResourceStrategy, obj: KubeObject, sctx: StrategyContext): void {
    strategy.prepareForCreate(obj, sctx);
    strategy.canonicalize?.(obj);
  }

  private async validateCreate(ctx: WriteContext, obj: KubeObject, sctx: StrategyContext): Promise<void> {
    const { def } = ctx;
    const metaErrs = validateObjectMeta(obj.metadata, { namespaced: def.namespaced, nameValidation: def.nameValidation });
    const errs: FieldError[] = [...metaErrs, ...(await this.metered(ctx, () => def.strategy.validate(obj, sctx)))];
    if (errs.length > 0) {
      throw ApiError.invalid({ group: def.group, kind: def.kind, name: obj.metadata.name ?? obj.metadata.generateName ?? '' }, errs);
    }
  }

  /**
   * Guaranteed update: read, transform, write conditionally on the read
   * revision; on a conflict, retry unless the client pinned a
   * resourceVersion (then 409). `strategy` defaults to the kind's (a
   * subresource passes its own). Returns the stored object (dry run: the
   * would-be object) and whether anything changed.
   */
  async update(
    ctx: WriteContext,
    name: string,
    transform: UpdateTransform,
    strategy: ResourceStrategy = ctx.def.strategy,
  ): Promise<{ object: KubeObject; changed: boolean }> {
    const { def } = ctx;
    const key = ResourceStoreService.key(ctx.tenant, def, ctx.namespace, name);
    const giveUpAt = Date.now() + UPDATE_RETRY_MS;
    while (Date.now() < giveUpAt) {
      const current = await this.objects.get(key, { internal: true });
      if (!current) throw ApiError.notFound({ group: def.group, kind: def.resource, name });
      const old = await fromStorageForm(def, current.body as KubeObject);
      const next = transform(cloneJson(old));
      const pinned = next.metadata?.resourceVersion;
      if (pinned !== undefined && pinned !== '' && pinned !== old.metadata.resourceVersion) {
        throw ApiError.staleConflict({ group: def.group, kind: def.resource, name });
      }
      this.typeAndIdentity(ctx, next, old);
      trackWrite(ctx, next, old);
      await this.runMutating(ctx, 'UPDATE', next, old);
      this.typeAndIdentity(ctx, next, old);
      const sctx = await this.strategyContext(ctx);
      this.prepareUpdate(ctx, next, old, strategy, sctx);
      await this.validateUpdate(ctx, next, old, strategy, sctx);
      await this.runValidating(ctx, 'UPDATE', cloneJson(next), cloneJson(old));
      ignoreTimestampOnlyChanges(next, old);
      // As upstream: an object stored by another key or provider than the first is rewritten even when unchanged (rotation by rewrite).
      if (isDeepStrictEqual(next, old) && !current.stale) {
        // Answering with what was read: it must be durable before a client sees it.
        await this.objects.ensureDurable();
        return { object: old, changed: false };
      }
      if (ctx.dryRun) return { object: next, changed: true };
      const toStore = await toStorageForm(def, next);
      try {
        const stored = await this.objects.update(key, toStore, current.revision);
        const body = stored.body as KubeObject;
        let revision = stored.revision;
        if (body.metadata.deletionTimestamp && (body.metadata.finalizers ?? []).length === 0 && (strategy.finalized?.(body) ?? true)) {
          revision = (await this.objects.delete(key, stored.revision)).revision;
          await this.hooks.objectRemoved(ctx.tenant, key.namespace);
          await this.synced(def, key, revision);
          return { object: await servedForm(def, body), changed: true };
        }
        await this.synced(def, key, revision);
        const hook = this.hooks.updatedHook(def.storageResource);
        return { object: await servedForm(def, hook ? await hook(ctx, body) : body), changed: true };
      } catch (err) {
        // Read again and transform again: a resourceVersion the client pinned then no longer matches (409 above).
        if (isStorageError(err, 'Conflict')) continue;
        mapStorageError(err, def, name);
      }
    }
    throw ApiError.staleConflict({ group: def.group, kind: def.resource, name });
  }

  /**
   * A system write that bypasses admission and validation (deletion
   * bookkeeping: deletionTimestamp, namespace phase). `mutate` changes the
   * current object in place; retried on conflicts. Returns the stored object.
   */
  async systemUpdate(ctx: WriteContext, name: string, mutate: (obj: KubeObject) => void): Promise<KubeObject> {
    const { def } = ctx;
    const key = ResourceStoreService.key(ctx.tenant, def, ctx.namespace, name);
    const giveUpAt = Date.now() + UPDATE_RETRY_MS;
    while (Date.now() < giveUpAt) {
      const current = await this.objects.get(key, { internal: true });
      if (!current) throw ApiError.notFound({ group: def.group, kind: def.resource, name });
      const next = cloneJson(current.body) as KubeObject;
      mutate(next);
      if (ctx.dryRun) return next;
      try {
        const stored = await this.objects.update(key, next, current.revision);
        await this.synced(def, key, stored.revision);
        return stored.body as KubeObject;
      } catch (err) {
        if (isStorageError(err, 'Conflict')) continue;
        mapStorageError(err, def, name);
      }
    }
    throw ApiError.staleConflict({ group: def.group, kind: def.resource, name });
  }

  /** Sets apiVersion and kind and defaults name and namespace from the stored object (before and after mutating admission). Mutates `next`. */
  private typeAndIdentity(ctx: WriteContext, next: KubeObject, old: KubeObject): void {
    const { def } = ctx;
    if (!isPlainObject(next.metadata)) next.metadata = {};
    const meta = next.metadata;
    next.apiVersion = groupVersion(def);
    next.kind = def.kind;
    if (def.namespaced && meta.namespace === undefined) meta.namespace = old.metadata.namespace;
    if (!def.namespaced) delete meta.namespace;
    if (meta.name === undefined) meta.name = old.metadata.name;
  }

  /**
   * Upstream's BeforeUpdate, after mutating admission: generation reset to
   * the stored one, the strategy's prepareForUpdate (which discards what
   * this endpoint may not change, e.g. status on the main resource), system
   * fields carried over, canonical form, and generation bumped when the
   * spec changed. Mutates `next`.
   */
  private prepareUpdate(ctx: WriteContext, next: KubeObject, old: KubeObject, strategy: ResourceStrategy, sctx: StrategyContext): void {
    const { def } = ctx;
    const meta = next.metadata;
    if (!meta.uid) meta.uid = old.metadata.uid;
    if (!meta.creationTimestamp) meta.creationTimestamp = old.metadata.creationTimestamp;
    meta.resourceVersion = old.metadata.resourceVersion;
    if (old.metadata.deletionTimestamp) {
      meta.deletionTimestamp = old.metadata.deletionTimestamp;
      meta.deletionGracePeriodSeconds = old.metadata.deletionGracePeriodSeconds;
    } else {
      delete meta.deletionTimestamp;
      delete meta.deletionGracePeriodSeconds;
    }
    if (def.tracksGeneration) meta.generation = old.metadata.generation;
    else delete meta.generation;
    strategy.prepareForUpdate(next, old, sctx);
    strategy.canonicalize?.(next);
    // The strategy may have replaced next.metadata (subresource strategies start from the stored object).
    if (def.tracksGeneration && !isDeepStrictEqual(specOf(next), specOf(old))) {
      next.metadata.generation = (old.metadata.generation ?? 0) + 1;
    }
  }

  /**
   * Runs a custom resource's validation under the tenant's validation
   * budget (429 when it is spent); the event-loop part is charged here, the
   * CEL workers charge what they spend.
   */
  private async metered(ctx: WriteContext, validate: () => FieldError[] | Promise<FieldError[]>): Promise<FieldError[]> {
    return ctx.def.custom && this.validationBudget ? this.validationBudget.runAsync(ctx.tenant, validate) : validate();
  }

  private async validateUpdate(ctx: WriteContext, next: KubeObject, old: KubeObject, strategy: ResourceStrategy, sctx: StrategyContext): Promise<void> {
    const { def } = ctx;
    const metaOpts = { namespaced: def.namespaced, nameValidation: def.nameValidation };
    const metaErrs = validateObjectMetaUpdate(next.metadata, old.metadata, metaOpts);
    const errs: FieldError[] = [...metaErrs, ...(await this.metered(ctx, () => strategy.validateUpdate(next, old, sctx)))];
    if (next.metadata.name !== old.metadata.name && !errs.some((e) => e.field === 'metadata.name')) {
      errs.unshift(fieldErrors.invalid('metadata.name', next.metadata.name, 'field is immutable'));
    }
    if (errs.length > 0) throw ApiError.invalid({ group: def.group, kind: def.kind, name: old.metadata.name }, errs);
  }

  private attributes(ctx: WriteContext, op: AdmissionOperation, obj: KubeObject | null, old: KubeObject | null): AdmissionAttributes {
    const { def } = ctx;
    return {
      tenant: ctx.tenant,
      user: ctx.user,
      operation: op,
      kind: { group: def.group, version: def.version, kind: def.kind },
      resource: { group: def.group, version: def.version, resource: def.resource },
      subresource: ctx.subresource,
      namespace: ctx.namespace,
      name: (obj ?? old)?.metadata.name ?? '',
      object: obj,
      oldObject: old,
      options: ctx.options,
      dryRun: ctx.dryRun,
      namespaced: def.namespaced,
    };
  }

  /** Runs mutating admission; the modules may change `obj` in place. */
  async runMutating(ctx: WriteContext, op: AdmissionOperation, obj: KubeObject | null, old: KubeObject | null): Promise<void> {
    const attrs = this.attributes(ctx, op, obj, old);
    const before = managedFieldsBefore(obj?.metadata?.managedFields);
    await this.admission.admit(attrs, { warnings: ctx.warnings, auditAnnotations: ctx.auditAnnotations });
    if (obj && attrs.object && attrs.object !== obj) {
      for (const k of Object.keys(obj)) delete obj[k];
      Object.assign(obj, attrs.object);
    }
    if (obj) guardManagedFields(ctx, obj, before);
  }

  /** Runs validating admission. */
  async runValidating(ctx: WriteContext, op: AdmissionOperation, obj: KubeObject | null, old: KubeObject | null): Promise<void> {
    await this.admission.validate(this.attributes(ctx, op, obj, old), { warnings: ctx.warnings, auditAnnotations: ctx.auditAnnotations });
  }
}

function specOf(o: KubeObject): unknown {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = o;
  return rest;
}
