import { managerFromUserAgent } from '@plinth/apimachinery';
import type { WriteOptions } from '../http/options/write-options.dto.js';
import { parseWriteOptions } from '../http/options/write-options.dto.js';
import type { WriteContext } from '../resource-store/write-context.js';
import { type HandlerContext, requestNamespace } from '../http/handler-context.js';

/** Parses the write options of a request and builds the store's WriteContext. */
export function writeContext(ctx: HandlerContext, kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions'): {
  wctx: WriteContext;
  opts: WriteOptions;
} {
  const opts = parseWriteOptions(ctx.query, ctx.queryAll.dryRun ?? []);
  const options: Record<string, unknown> = { kind, apiVersion: 'meta.k8s.io/v1' };
  if (opts.dryRun) options.dryRun = ['All'];
  if (opts.fieldManager) options.fieldManager = opts.fieldManager;
  if (kind !== 'DeleteOptions') options.fieldValidation = opts.fieldValidation;
  return {
    opts,
    wctx: {
      tenant: ctx.info.tenant,
      def: ctx.def,
      namespace: requestNamespace(ctx),
      subresource: ctx.info.subresource,
      user: ctx.user,
      dryRun: opts.dryRun,
      options,
      warnings: ctx.warnings,
      auditAnnotations: (ctx.req.auditAnnotations ??= {}),
      fieldManager: opts.fieldManager || managerFromUserAgent(ctx.req.headers['user-agent']),
    },
  };
}
