import type { HandlerContext } from '../http/handler-context.js';
import type { ResourceDefinition } from '../registry/resource-definition.js';

/** Answers one request in place of the generic handler of its verb. */
export type RestHandler = (ctx: HandlerContext) => Promise<void>;

/** The verbs of a request (RequestInfo's), which a kind's own REST may take over. */
export type RestVerb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

/**
 * What a kind (or every kind with some property) serves differently from
 * the generic store, as upstream's per-kind REST storage does: verbs of the
 * resource answered without storing (TokenReview's create), subresources
 * with handlers of their own (a ServiceAccount's `token`, a custom
 * resource's `scale`). The concern that implements the kind's behaviour
 * declares its KindRest beside the handlers; the wiring lists them all
 * (app/resource-api.module.ts). What it does not name falls to the generic
 * handlers, after the same checks (the resource and subresource served, the
 * verb allowed, a namespace where one is needed).
 */
export interface KindRest {
  /** Whether this REST is `def`'s: a built-in kind by identity, or every definition with some property. */
  serves(def: ResourceDefinition): boolean;
  /** Handlers of verbs of the resource itself. */
  verbs?: Partial<Record<RestVerb, RestHandler>>;
  /** Handlers of verbs of subresources, by subresource name. */
  subresources?: Record<string, Partial<Record<RestVerb, RestHandler>>>;
}

/**
 * Every kind's own REST; the resource controller asks it before handing a
 * request to the generic handler of its verb, and so names no kind itself.
 */
export class KindRestRegistry {
  constructor(private readonly rests: readonly KindRest[] = []) {}

  /** The handler `def`'s own REST gives `verb` (on `subresource` when set), or undefined: the generic handler serves it. */
  handler(def: ResourceDefinition, verb: string, subresource?: string): RestHandler | undefined {
    for (const rest of this.rests) {
      if (!rest.serves(def)) continue;
      const handlers = subresource === undefined ? rest.verbs : rest.subresources?.[subresource];
      const handler = handlers?.[verb as RestVerb];
      if (handler) return handler;
    }
    return undefined;
  }
}
