import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/** How much of a request an audit event records, as upstream's audit levels. */
export type AuditLevel = 'None' | 'Metadata' | 'Request' | 'RequestResponse';
/** The stages at which events are written. */
export type AuditStage = 'RequestReceived' | 'ResponseStarted' | 'ResponseComplete' | 'Panic';

const LEVELS: AuditLevel[] = ['None', 'Metadata', 'Request', 'RequestResponse'];
const STAGES: AuditStage[] = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'];

/** One `rules[]` entry of an audit.k8s.io/v1 Policy. */
interface PolicyRule {
  level: AuditLevel;
  users?: string[];
  userGroups?: string[];
  verbs?: string[];
  resources?: { group?: string; resources?: string[]; resourceNames?: string[] }[];
  namespaces?: string[];
  nonResourceURLs?: string[];
  omitStages?: AuditStage[];
  omitManagedFields?: boolean;
}

/** What a policy decides on (upstream's authorizer attributes). */
export interface AuditAttributes {
  user: string;
  groups: string[];
  verb: string;
  resourceRequest: boolean;
  apiGroup: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  path: string;
}

/** A policy's decision for one request. */
export interface AuditDecision {
  level: AuditLevel;
  omitStages: Set<AuditStage>;
  omitManagedFields: boolean;
}

/** An audit policy that cannot be used; start-up stops with this message. */
export class AuditPolicyError extends Error {}

function strings(v: unknown, where: string): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new AuditPolicyError(`${where} must be a list of strings`);
  return v as string[];
}

function stages(v: unknown, where: string): AuditStage[] {
  const list = strings(v, where) ?? [];
  for (const s of list) if (!STAGES.includes(s as AuditStage)) throw new AuditPolicyError(`${where}: unknown stage "${s}"`);
  return list as AuditStage[];
}

/** `value` matched by a list where `*` matches everything and `prefix*` a prefix (nonResourceURLs). */
function wildcardMatch(patterns: string[], value: string): boolean {
  return patterns.some((p) => p === '*' || p === value || (p.endsWith('*') && value.startsWith(p.slice(0, -1))));
}

/**
 * An audit.k8s.io/v1 `Policy`: the first rule that matches a request gives
 * its level and omitted stages, as upstream's policy checker; no match is
 * level None.
 */
export class AuditPolicy {
  private constructor(
    private readonly rules: PolicyRule[],
    private readonly omitStages: AuditStage[],
    private readonly omitManagedFields: boolean,
  ) {}

  /** Reads and validates a policy file (YAML or JSON); throws AuditPolicyError naming what is wrong. */
  static fromFile(file: string): AuditPolicy {
    let doc: unknown;
    try {
      doc = parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new AuditPolicyError(`audit policy ${file}: ${(err as Error).message}`);
    }
    return AuditPolicy.fromObject(doc);
  }

  /** Validates a parsed policy. */
  static fromObject(doc: unknown): AuditPolicy {
    const d = doc as { apiVersion?: unknown; kind?: unknown; rules?: unknown; omitStages?: unknown; omitManagedFields?: unknown };
    if (!d || typeof d !== 'object' || d.kind !== 'Policy' || d.apiVersion !== 'audit.k8s.io/v1') throw new AuditPolicyError('an audit policy must be apiVersion audit.k8s.io/v1, kind Policy');
    if (!Array.isArray(d.rules)) throw new AuditPolicyError('rules: a list is required');
    const rules = d.rules.map((r: Record<string, unknown>, i: number): PolicyRule => {
      const where = `rules[${i}]`;
      if (!LEVELS.includes(r?.level as AuditLevel)) throw new AuditPolicyError(`${where}.level: must be one of ${LEVELS.join(', ')}`);
      const resources = r.resources === undefined ? undefined : (r.resources as PolicyRule['resources']);
      if (resources !== undefined && !Array.isArray(resources)) throw new AuditPolicyError(`${where}.resources must be a list`);
      const nonResourceURLs = strings(r.nonResourceURLs, `${where}.nonResourceURLs`);
      if (nonResourceURLs && (resources || r.namespaces)) throw new AuditPolicyError(`${where}: rules cannot apply to both regular resources and non-resource URLs`);
      return {
        level: r.level as AuditLevel,
        users: strings(r.users, `${where}.users`),
        userGroups: strings(r.userGroups, `${where}.userGroups`),
        verbs: strings(r.verbs, `${where}.verbs`),
        resources,
        namespaces: strings(r.namespaces, `${where}.namespaces`),
        nonResourceURLs,
        omitStages: stages(r.omitStages, `${where}.omitStages`),
        omitManagedFields: typeof r.omitManagedFields === 'boolean' ? r.omitManagedFields : undefined,
      };
    });
    return new AuditPolicy(rules, stages(d.omitStages, 'omitStages'), d.omitManagedFields === true);
  }

  /** The decision for `a`. */
  decide(a: AuditAttributes): AuditDecision {
    const rule = this.rules.find((r) => this.matches(r, a));
    if (!rule) return { level: 'None', omitStages: new Set(), omitManagedFields: false };
    return { level: rule.level, omitStages: new Set([...this.omitStages, ...(rule.omitStages ?? [])]), omitManagedFields: rule.omitManagedFields ?? this.omitManagedFields };
  }

  private matches(r: PolicyRule, a: AuditAttributes): boolean {
    if (r.users && !r.users.includes(a.user)) return false;
    if (r.userGroups && !r.userGroups.some((g) => a.groups.includes(g))) return false;
    if (r.verbs && !r.verbs.includes(a.verb)) return false;
    if (r.nonResourceURLs) return !a.resourceRequest && wildcardMatch(r.nonResourceURLs, a.path);
    if (r.namespaces || r.resources) {
      if (!a.resourceRequest) return false;
      if (r.namespaces && !r.namespaces.includes(a.namespace)) return false;
      if (r.resources && !r.resources.some((g) => this.matchesResource(g, a))) return false;
    }
    return true;
  }

  private matchesResource(g: NonNullable<PolicyRule['resources']>[number], a: AuditAttributes): boolean {
    if ((g.group ?? '') !== a.apiGroup && g.group !== '*') return false;
    if (g.resources && g.resources.length > 0) {
      const full = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
      const ok = g.resources.some((r) => r === '*' || r === full || r === `${a.resource}/*` || (r.startsWith('*/') && a.subresource === r.slice(2)));
      if (!ok) return false;
    }
    if (g.resourceNames && g.resourceNames.length > 0 && !g.resourceNames.includes(a.name)) return false;
    return true;
  }
}
