import type { AuthorizationAttributes, AuthorizationDecision, Authorizer } from '@plinth/apimachinery';

/** One authorizer of a chain, with what its metrics and logs call it. */
export interface NamedAuthorizer {
  type: string;
  name: string;
  authorizer: Authorizer;
}

/** Called with each terminal decision (allow or deny) and the authorizer that made it. */
export type OnDecision = (entry: NamedAuthorizer, decision: AuthorizationDecision) => void;

interface Acc {
  reasons: string[];
  errors: string[];
}

/** The decision of `entry` when it ends the chain (allow or deny), else undefined after noting its reason and error. */
function step(d: AuthorizationDecision, acc: Acc, entry: NamedAuthorizer, onDecision?: OnDecision): AuthorizationDecision | undefined {
  if (d.error) acc.errors.push(d.error);
  if (d.allowed || !d.noOpinion) {
    onDecision?.(entry, d);
    return d;
  }
  if (d.reason) acc.reasons.push(d.reason);
  return undefined;
}

function finish(acc: Acc): AuthorizationDecision {
  const out: AuthorizationDecision = { allowed: false, noOpinion: true };
  if (acc.reasons.length > 0) out.reason = acc.reasons.join('\n');
  if (acc.errors.length > 0) out.error = acc.errors.length === 1 ? acc.errors[0] : `[${acc.errors.join(', ')}]`;
  return out;
}

function run(attrs: AuthorizationAttributes, entries: readonly NamedAuthorizer[], from: number, acc: Acc, onDecision?: OnDecision): AuthorizationDecision | Promise<AuthorizationDecision> {
  for (let i = from; i < entries.length; i++) {
    const entry = entries[i];
    const d = entry.authorizer.authorize(attrs);
    if (d instanceof Promise) return d.then((r) => step(r, acc, entry, onDecision) ?? run(attrs, entries, i + 1, acc, onDecision));
    const end = step(d, acc, entry, onDecision);
    if (end) return end;
  }
  return finish(acc);
}

/**
 * Upstream's union authorizer: asks `entries` in order; the first allow or
 * deny is the decision (its own reason and error); no opinion from all is
 * no opinion, with the reasons joined by newlines and the errors
 * aggregated (`[a, b]`). Synchronous while every authorizer answers
 * synchronously; a rejection of one is the rejection of the whole.
 */
export function unionAuthorize(attrs: AuthorizationAttributes, entries: readonly NamedAuthorizer[], onDecision?: OnDecision): AuthorizationDecision | Promise<AuthorizationDecision> {
  return run(attrs, entries, 0, { reasons: [], errors: [] }, onDecision);
}
