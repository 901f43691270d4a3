import type { FastifyReply, FastifyRequest } from 'fastify';
import type { UserInfo } from '@plinth/admission';
import type { RequestInfo } from './request-info.js';
import type { ResourceDefinition } from '../registry/resource-definition.js';

/** Everything a verb handler gets for one resource request. */
export interface HandlerContext {
  req: FastifyRequest;
  reply: FastifyReply;
  info: RequestInfo;
  def: ResourceDefinition;
  /** Query parameters, first value of each. */
  query: Record<string, string>;
  /** All values of each query parameter. */
  queryAll: Record<string, string[]>;
  body: Buffer | undefined;
  user: UserInfo;
  /** Collected warnings, sent as Warning headers with the answer. */
  warnings: string[];
  /**
   * The newest revision when the tenant (this incarnation of its name) was
   * created: no change at or below it is the tenant's, so watches never
   * replay anything older (a deleted tenant of the same name).
   */
  tenantSince?: number;
}

/** The namespace a request addresses for `def` ('' for cluster-scoped kinds). */
export function requestNamespace(ctx: HandlerContext): string {
  return ctx.def.namespaced ? ctx.info.namespace : '';
}
