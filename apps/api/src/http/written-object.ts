import type { FastifyRequest } from 'fastify';
import type { KubeObject } from '@plinth/apimachinery';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * What the write this request made put in PostgreSQL, beyond its bytes:
     * the labels of the object it stored (each an entry in the label
     * indexes). Set when a write answers with the object it wrote; read by
     * flow control to charge the write its database work.
     */
    written?: { labels: number };
  }
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

function labelsOf(obj: KubeObject): number {
  const labels = obj.metadata?.labels;
  return labels && typeof labels === 'object' ? Object.keys(labels).length : 0;
}

/**
 * Notes the object a write answers with, which is the object it stored
 * (create, update, patch, apply; delete where the kind answers with the
 * object), so flow control can price the write by its labels. Reads, dry
 * runs and requests already noted ({@link noteWrittenObjects}) are left as
 * they are.
 */
export function noteWrittenObject(req: FastifyRequest, obj: KubeObject): void {
  if (READS.has(req.method) || req.written) return;
  const query = req.query as Record<string, unknown> | undefined;
  if (query?.dryRun !== undefined) return;
  req.written = { labels: labelsOf(obj) };
}

/**
 * Notes the objects a write stored or removed, whatever it answers (a
 * delete answered with a Status, a delete of a collection); none on a dry
 * run.
 */
export function noteWrittenObjects(req: FastifyRequest, objs: KubeObject[], dryRun: boolean): void {
  req.written = { labels: dryRun ? 0 : objs.reduce((n, o) => n + labelsOf(o), 0) };
}
