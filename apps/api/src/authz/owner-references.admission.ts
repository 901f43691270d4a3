import type { AdmissionAttributes, AdmissionModule, AdmissionOperation } from '@plinth/admission';
import { AdmissionError } from '@plinth/admission';
import { isDeepStrictEqual } from 'node:util';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import type { AuthorizationAttributes } from '@plinth/apimachinery';
import type { RequestAuthorizer } from './authorizer-chain.js';

interface OwnerRef {
  apiVersion?: string;
  kind?: string;
  name?: string;
  uid?: string;
  blockOwnerDeletion?: boolean;
}

function refsOf(o: Record<string, unknown> | null): OwnerRef[] {
  const refs = (o?.metadata as { ownerReferences?: unknown } | undefined)?.ownerReferences;
  return Array.isArray(refs) ? (refs as OwnerRef[]) : [];
}

function splitApiVersion(apiVersion: string): [string, string] {
  const i = apiVersion.indexOf('/');
  return i < 0 ? ['', apiVersion] : [apiVersion.slice(0, i), apiVersion.slice(i + 1)];
}

/**
 * Upstream's OwnerReferencesPermissionEnforcement: changing an object's
 * ownerReferences takes permission to delete the object, and setting
 * `blockOwnerDeletion` on a reference takes permission to update the
 * owner's `finalizers` subresource (else a user could hold up the deletion
 * of objects they cannot touch). Privileged groups skip it; upstream's 403
 * texts.
 */
export class OwnerReferencesPermissionModule implements AdmissionModule {
  readonly name = 'OwnerReferencesPermissionEnforcement';

  constructor(
    private readonly authorizer: RequestAuthorizer,
    private readonly registry: ResourceRegistry,
  ) {}

  handles(operation: AdmissionOperation): boolean {
    return operation === 'CREATE' || operation === 'UPDATE';
  }

  async validate(attrs: AdmissionAttributes): Promise<void> {
    if (!attrs.object || attrs.subresource || this.authorizer.isPrivileged(attrs.user.groups)) return;
    const refs = refsOf(attrs.object);
    const oldRefs = refsOf(attrs.oldObject);
    if (isDeepStrictEqual(refs, oldRefs)) return;
    const res = attrs.resource;
    const qualified = res.group ? `${res.resource}.${res.group}` : res.resource;
    const base = { user: attrs.user, tenant: attrs.tenant, resourceRequest: true, apiVersion: res.version, path: '' };
    if (attrs.operation === 'UPDATE') {
      const del: AuthorizationAttributes = { ...base, verb: 'delete', apiGroup: res.group, resource: res.resource, subresource: '', namespace: attrs.namespace, name: attrs.name };
      if (!(await this.authorizer.authorize(del)).allowed) {
        throw this.forbidden(qualified, attrs.name, `cannot set an ownerRef on a resource you can't delete: ${JSON.stringify(attrs.name)}`);
      }
    }
    for (const ref of refs) {
      if (ref.blockOwnerDeletion !== true) continue;
      if (oldRefs.some((o) => o.uid === ref.uid && o.blockOwnerDeletion === true)) continue;
      const [group, version] = splitApiVersion(ref.apiVersion ?? '');
      const def = this.registry.all(attrs.tenant).find((d) => d.group === group && d.kind === ref.kind);
      const ownerAttrs: AuthorizationAttributes = {
        ...base,
        verb: 'update',
        apiGroup: group,
        apiVersion: version,
        resource: def?.resource ?? '',
        subresource: 'finalizers',
        namespace: def?.namespaced ? attrs.namespace : '',
        name: ref.name ?? '',
      };
      if (!def || !(await this.authorizer.authorize(ownerAttrs)).allowed) {
        throw this.forbidden(qualified, attrs.name, `cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: ${JSON.stringify(ref)}`);
      }
    }
  }

  private forbidden(qualified: string, name: string, detail: string): AdmissionError {
    const subject = name ? `${qualified} ${JSON.stringify(name)}` : qualified;
    return new AdmissionError({ code: 403, reason: 'Forbidden', message: `${subject} is forbidden: ${detail}` });
  }
}
