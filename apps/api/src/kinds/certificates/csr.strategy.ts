import { isPlainObject, type KubeObject, rfc3339Now } from '@plinth/apimachinery';
import type { ResourceStrategy, StrategyContext } from '../../registry/resource-definition.js';
import { type CsrCondition, csrConditions, csrSpec } from './csr-api.js';
import { validateCertificateKept, validateConditionsKept, validateCsr } from './csr.validation.js';

/**
 * Upstream's populateConditionTimestamps: a condition without
 * lastUpdateTime gets now; without lastTransitionTime, the old one of the
 * same type and status when there is one, else now. Mutates `obj`.
 */
function populateConditionTimestamps(obj: KubeObject, old: KubeObject): void {
  const at = rfc3339Now();
  const oldConditions = csrConditions(old);
  for (const c of csrConditions(obj)) {
    if (!c.lastUpdateTime) c.lastUpdateTime = at;
    if (!c.lastTransitionTime) {
      c.lastTransitionTime = oldConditions.find((o) => o.type === c.type && o.status === c.status && o.lastTransitionTime)?.lastTransitionTime ?? at;
    }
  }
}

function setConditions(obj: KubeObject, conditions: CsrCondition[]): void {
  const status = isPlainObject(obj.status) ? obj.status : {};
  if (conditions.length > 0) status.conditions = conditions;
  else delete status.conditions;
  obj.status = status;
}

/** The identity of the requester, from the write (never from the client). Mutates `obj`. */
function stampRequester(obj: KubeObject, ctx: StrategyContext): void {
  const spec = csrSpec(obj);
  delete spec.username;
  delete spec.uid;
  delete spec.groups;
  delete spec.extra;
  const user = ctx.user;
  if (user) {
    if (user.username) spec.username = user.username;
    if (user.uid) spec.uid = user.uid;
    if (user.groups.length > 0) spec.groups = [...user.groups];
    if (user.extra && Object.keys(user.extra).length > 0) spec.extra = structuredClone(user.extra);
  }
  obj.spec = spec;
}

/**
 * certificates.k8s.io/v1 CertificateSigningRequest (registry/certificates):
 * on create the status is cleared (no pre-approved requests) and
 * spec.username, uid, groups and extra are the requester's; updates of
 * the main resource change metadata only. Cluster-scoped in each tenant.
 */
export const csrStrategy: ResourceStrategy = {
  prepareForCreate: (obj, ctx) => {
    obj.status = {};
    stampRequester(obj, ctx);
  },
  prepareForUpdate: (obj, old) => {
    obj.spec = old.spec;
    obj.status = old.status;
  },
  validate: (obj) => validateCsr(obj),
  validateUpdate: (obj) => validateCsr(obj),
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};

/**
 * Writes to `approval` (kubectl certificate approve|deny): only
 * status.conditions change; the Approved, Denied and Failed conditions
 * already there cannot be removed. Mutates `obj`.
 */
export const csrApprovalStrategy: ResourceStrategy = {
  ...csrStrategy,
  prepareForCreate: () => undefined,
  prepareForUpdate: (obj, old) => {
    const conditions = csrConditions(obj);
    obj.spec = old.spec;
    obj.metadata = { ...old.metadata, resourceVersion: obj.metadata.resourceVersion };
    obj.status = structuredClone(old.status ?? {});
    setConditions(obj, conditions);
    populateConditionTimestamps(obj, old);
  },
  validateUpdate: async (obj, old) => [...(await validateCsr(obj)), ...validateConditionsKept(obj, old)],
};

/**
 * Writes to `status` (signers): spec is kept; Approved and Denied stay as
 * they were (only `approval` changes them); an issued certificate cannot
 * be replaced, nor a sticky condition removed. Mutates `obj`.
 */
export const csrStatusStrategy: ResourceStrategy = {
  ...csrStrategy,
  prepareForCreate: () => undefined,
  prepareForUpdate: (obj, old) => {
    obj.spec = old.spec;
    const decided = (c: CsrCondition) => c.type === 'Approved' || c.type === 'Denied';
    setConditions(obj, [...csrConditions(obj).filter((c) => !decided(c)), ...structuredClone(csrConditions(old).filter(decided))]);
    populateConditionTimestamps(obj, old);
  },
  validateUpdate: async (obj, old) => [...(await validateCsr(obj)), ...validateConditionsKept(obj, old), ...validateCertificateKept(obj, old)],
};
