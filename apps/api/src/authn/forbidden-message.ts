import type { AuthorizationAttributes } from '@plinth/apimachinery';

/** Upstream's forbidden message body for `attrs` (`User "x" cannot get resource "pods" in API group "" in the namespace "y"`). */
export function forbiddenReason(attrs: AuthorizationAttributes): string {
  const who = attrs.user.username;
  if (!attrs.resourceRequest) return `User ${JSON.stringify(who)} cannot ${attrs.verb} path ${JSON.stringify(attrs.path)}`;
  const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  const where = attrs.namespace ? `in the namespace ${JSON.stringify(attrs.namespace)}` : 'at the cluster scope';
  return `User ${JSON.stringify(who)} cannot ${attrs.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(attrs.apiGroup)} ${where}`;
}

/** The whole Status message upstream sends with a 403 for `attrs` (`configmaps "x" is forbidden: …`, `forbidden: …` for paths). */
export function forbiddenMessage(attrs: AuthorizationAttributes, reason?: string): string {
  const tail = reason ? `: ${reason}` : '';
  if (!attrs.resourceRequest) return `forbidden: ${forbiddenReason(attrs)}${tail}`;
  const qualified = attrs.apiGroup ? `${attrs.resource}.${attrs.apiGroup}` : attrs.resource;
  const subject = attrs.name ? `${qualified} ${JSON.stringify(attrs.name)}` : qualified;
  return `${subject} is forbidden: ${forbiddenReason(attrs)}${tail}`;
}
