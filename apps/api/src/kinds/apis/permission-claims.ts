import { type FieldError, fieldErrors, isPlainObject, type KubeObject } from '@plinth/apimachinery';

/** One entry of a claim's `resourceSelector` (kcp's): objects of this name and/or namespace. */
export interface ClaimSelector {
  name?: string;
  namespace?: string;
}

/** APIExport.spec.permissionClaims[i], normalized: verbs defaulted, sorted and deduplicated. */
export interface PermissionClaim {
  group: string;
  resource: string;
  verbs: string[];
  all: boolean;
  resourceSelector: ClaimSelector[];
}

/** APIBinding.spec.permissionClaims[i]: a claim of the export and the consumer's answer. */
export interface AcceptablePermissionClaim extends PermissionClaim {
  state: string;
}

/** The verbs a claim may name (`*` is every one of them). */
export const CLAIM_VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];
/** The verbs of a claim that names none: read only. */
export const DEFAULT_CLAIM_VERBS = ['get', 'list', 'watch'];
/** The states a consumer gives a claim. */
export const CLAIM_STATES = ['Accepted', 'Rejected'];
/** Groups no claim may name: a provider must not edit the bindings and exports that grant it its claims. */
const UNCLAIMABLE_GROUPS = new Set(['apis.plinth.dev']);
const RESOURCE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function normalize(raw: unknown): PermissionClaim {
  const c = isPlainObject(raw) ? raw : {};
  const verbs = Array.isArray(c.verbs) ? c.verbs.filter((v): v is string => typeof v === 'string') : [];
  const selector = Array.isArray(c.resourceSelector) ? c.resourceSelector.filter(isPlainObject) : [];
  return {
    group: str(c.group),
    resource: str(c.resource),
    verbs: [...new Set(verbs.length === 0 ? DEFAULT_CLAIM_VERBS : verbs.includes('*') ? ['*'] : verbs)].sort(),
    all: c.all === true,
    resourceSelector: selector.map((s) => ({ ...(str(s.name) ? { name: str(s.name) } : {}), ...(str(s.namespace) ? { namespace: str(s.namespace) } : {}) })),
  };
}

function specList(o: KubeObject | Record<string, unknown>): unknown[] {
  const spec = isPlainObject(o.spec) ? o.spec : {};
  return Array.isArray(spec.permissionClaims) ? spec.permissionClaims : [];
}

/** APIExport.spec.permissionClaims of `o`, normalized (malformed entries read as empty). Pure. */
export function exportClaims(o: KubeObject | Record<string, unknown>): PermissionClaim[] {
  return specList(o).map(normalize);
}

/** APIBinding.spec.permissionClaims of `o`, normalized, each with its state. Pure. */
export function bindingClaims(o: KubeObject | Record<string, unknown>): AcceptablePermissionClaim[] {
  return specList(o).map((raw) => ({ ...normalize(raw), state: str(isPlainObject(raw) ? raw.state : undefined) }));
}

/** The group/resource a claim is about, as `resource.group` (`secrets` for the core group). */
export function claimResource(c: { group: string; resource: string }): string {
  return c.group ? `${c.resource}.${c.group}` : c.resource;
}

/** Whether two claims are the same claim: resource, verbs and selection all equal (an acceptance answers exactly one claim). */
export function sameClaim(a: PermissionClaim, b: PermissionClaim): boolean {
  const sel = (c: PermissionClaim) => JSON.stringify(c.resourceSelector.map((s) => [s.namespace ?? '', s.name ?? '']).sort());
  return a.group === b.group && a.resource === b.resource && a.all === b.all && a.verbs.join(',') === b.verbs.join(',') && sel(a) === sel(b);
}

/** Whether the claim lets its holder use `verb`. */
export function claimAllows(c: PermissionClaim, verb: string): boolean {
  return c.verbs.includes('*') || c.verbs.includes(verb);
}

/** Whether the claim covers the object `name` in `namespace` ('' for cluster-scoped). */
export function claimSelects(c: PermissionClaim, namespace: string, name: string): boolean {
  if (c.all) return true;
  return c.resourceSelector.some((s) => (s.name === undefined || s.name === name) && (s.namespace === undefined || s.namespace === namespace));
}

/**
 * The structural checks of a list of permission claims at `path`
 * (`spec.permissionClaims`), as kcp's: a resource, known verbs, exactly one
 * of `all: true` and a non-empty `resourceSelector` (each entry naming a
 * name or a namespace), no resource claimed twice, no claim on
 * `apis.plinth.dev`; with `withState` (an APIBinding's), a state of
 * Accepted or Rejected. Pure; whether the resource exists is admission's.
 */
export function validateClaims(o: KubeObject | Record<string, unknown>, path: string, withState: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  specList(o).forEach((raw, i) => {
    const at = `${path}[${i}]`;
    if (!isPlainObject(raw)) {
      errs.push(fieldErrors.invalid(at, raw, 'must be an object'));
      return;
    }
    const c = normalize(raw);
    if (c.resource === '') errs.push(fieldErrors.required(`${at}.resource`, ''));
    else if (!RESOURCE_NAME.test(c.resource)) errs.push(fieldErrors.invalid(`${at}.resource`, c.resource, 'must be a lower-case plural resource name'));
    if (UNCLAIMABLE_GROUPS.has(c.group)) errs.push(fieldErrors.forbidden(`${at}.group`, `the resources of ${c.group} cannot be claimed`));
    if (Array.isArray(raw.verbs)) {
      raw.verbs.forEach((v, j) => {
        if (v !== '*' && !CLAIM_VERBS.includes(v as string)) errs.push(fieldErrors.notSupported(`${at}.verbs[${j}]`, v, ['*', ...CLAIM_VERBS]));
      });
    }
    const selectors = Array.isArray(raw.resourceSelector) ? raw.resourceSelector : [];
    if (c.all && selectors.length > 0) errs.push(fieldErrors.forbidden(`${at}.resourceSelector`, 'must be empty when all is true'));
    if (!c.all && selectors.length === 0) errs.push(fieldErrors.required(at, 'either all: true or a resourceSelector'));
    selectors.forEach((s, j) => {
      if (!isPlainObject(s) || (str(s.name) === '' && str(s.namespace) === '')) errs.push(fieldErrors.required(`${at}.resourceSelector[${j}]`, 'a name or a namespace'));
    });
    const key = `${c.group}/${c.resource}`;
    if (seen.has(key)) errs.push(fieldErrors.duplicate(at, { group: c.group, resource: c.resource }));
    seen.add(key);
    if (withState) {
      const state = raw.state;
      if (state === undefined || state === '') errs.push(fieldErrors.required(`${at}.state`, 'Accepted or Rejected'));
      else if (!CLAIM_STATES.includes(state as string)) errs.push(fieldErrors.notSupported(`${at}.state`, state, CLAIM_STATES));
    }
  });
  return errs;
}

/** What an APIBinding's status says of the export's claims (kcp's exportPermissionClaims/appliedPermissionClaims). Pure. */
export interface ClaimsOutcome {
  /** Every claim of the export. */
  requested: PermissionClaim[];
  /** The claims the binding accepts, exactly as the export makes them: those the view grants. */
  applied: PermissionClaim[];
  /** Claims of the export the binding rejects. */
  rejected: PermissionClaim[];
  /** Claims of the export the binding does not answer (or answers for another version of the claim). */
  open: PermissionClaim[];
  /** Answers of the binding that match no claim of the export. */
  stale: AcceptablePermissionClaim[];
}

/** Matches a binding's answers against its export's claims. Pure. */
export function claimsOutcome(requested: PermissionClaim[], answers: AcceptablePermissionClaim[]): ClaimsOutcome {
  const out: ClaimsOutcome = { requested, applied: [], rejected: [], open: [], stale: [] };
  for (const claim of requested) {
    const answer = answers.find((a) => sameClaim(a, claim));
    if (answer?.state === 'Accepted') out.applied.push(claim);
    else if (answer?.state === 'Rejected') out.rejected.push(claim);
    else out.open.push(claim);
  }
  out.stale = answers.filter((a) => !requested.some((c) => sameClaim(a, c)));
  return out;
}
