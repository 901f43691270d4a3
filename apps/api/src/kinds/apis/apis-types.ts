import { isPlainObject, type KubeObject } from '@plinth/apimachinery';

/** `{group, resource}` of an exported CRD, as in APIExport.spec.resources. */
export interface ExportedResource {
  group: string;
  resource: string;
}

/** Where an APIBinding points: the provider tenant and the export's name. */
export interface ExportReference {
  path: string;
  name: string;
}

function obj(v: unknown): Record<string, unknown> {
  return isPlainObject(v) ? v : {};
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** APIExport.spec.resources of `o` (malformed entries read as empty strings). Pure. */
export function exportedResources(o: KubeObject | Record<string, unknown>): ExportedResource[] {
  const list = obj(o.spec).resources;
  return Array.isArray(list) ? list.map((r) => ({ group: str(obj(r).group), resource: str(obj(r).resource) })) : [];
}

/** APIBinding.spec.reference.export of `o` (empty strings when unset). Pure. */
export function exportReference(o: KubeObject | Record<string, unknown>): ExportReference {
  const e = obj(obj(obj(o.spec).reference).export);
  return { path: str(e.path), name: str(e.name) };
}

/** The key of an export across tenants: `<tenant>/<name>`. */
export function exportKey(ref: ExportReference): string {
  return `${ref.path}/${ref.name}`;
}

/** The path of an export's view (kcp's virtual workspace URL), below which `/clusters/*` or `/clusters/<tenant>` follows. */
export function exportViewPath(tenant: string, name: string): string {
  return `/services/apiexport/${encodeURIComponent(tenant)}/${encodeURIComponent(name)}`;
}
