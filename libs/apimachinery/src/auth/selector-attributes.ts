import type { SelectorRequirementAttributes } from './authorizer.js';
import { parseFieldSelector } from '../selector/field-selector.js';
import { parseLabelSelector } from '../selector/label-selector.js';

/**
 * A field selector's requirements as authorizers receive them (upstream's
 * fieldSelectorToAuthorizationAPI): `a=b` and `a==b` as `In [b]`, `a!=b`
 * as `NotIn [b]`. Undefined for an empty or unparsable selector (it is
 * refused later, by the list itself). Pure.
 */
export function fieldSelectorAttributes(selector: string | undefined): SelectorRequirementAttributes[] | undefined {
  if (!selector) return undefined;
  try {
    const reqs = parseFieldSelector(selector).requirements.map((r): SelectorRequirementAttributes => ({ key: r.field, operator: r.operator === '!=' ? 'NotIn' : 'In', values: [r.value] }));
    return reqs.length > 0 ? reqs : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A label selector's requirements as authorizers receive them (upstream's
 * labelSelectorToAuthorizationAPI): `=`, `==` and `in` as `In`, `!=` and
 * `notin` as `NotIn`, `Exists`, `DoesNotExist`, values sorted; `>` and `<`
 * have no form in the API and are left out (selectors only narrow, so what
 * remains is still a bound). Undefined when none remain or it does not parse. Pure.
 */
export function labelSelectorAttributes(selector: string | undefined): SelectorRequirementAttributes[] | undefined {
  if (!selector) return undefined;
  let parsed;
  try {
    parsed = parseLabelSelector(selector);
  } catch {
    return undefined;
  }
  const reqs: SelectorRequirementAttributes[] = [];
  for (const r of parsed.requirements) {
    if (r.operator === 'In' || r.operator === 'Equals' || r.operator === 'DoubleEquals') reqs.push({ key: r.key, operator: 'In', values: [...r.values] });
    else if (r.operator === 'NotIn' || r.operator === 'NotEquals') reqs.push({ key: r.key, operator: 'NotIn', values: [...r.values] });
    else if (r.operator === 'Exists' || r.operator === 'DoesNotExist') reqs.push({ key: r.key, operator: r.operator });
  }
  return reqs.length > 0 ? reqs : undefined;
}
