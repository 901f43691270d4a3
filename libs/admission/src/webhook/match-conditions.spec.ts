import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CelBudget } from '@plinth/cel';
import { compileMatchConditions, evaluateMatchConditions, MATCH_CONDITIONS_COST_BUDGET, MATCH_CONDITIONS_OUT_OF_BUDGET } from './match-conditions.js';

// Each of these runs into the per-call limit (1,000,000) on a list of 1,000 numbers.
const COSTLY = 'object.l.all(a, object.l.all(b, a + b > 0))';
const OBJECT = { l: Array.from({ length: 1000 }, (_, i) => i + 1) };

/** The default budget's cost, with a wall-clock bound no loaded machine reaches, so the cost alone decides. */
const costOnly = () => new CelBudget(MATCH_CONDITIONS_COST_BUDGET, 60_000);

describe('matchConditions share one cost budget per webhook (upstream RuntimeCELCostBudgetMatchConditions)', () => {
  it('reports each condition that runs into the per-call limit while the shared budget lasts', () => {
    const two = compileMatchConditions([
      { name: 'a', expression: COSTLY },
      { name: 'b', expression: COSTLY },
    ]);
    const outcome = evaluateMatchConditions(two, { object: OBJECT, oldObject: null, request: {} }, costOnly());
    assert.equal(outcome.matches, false);
    assert.deepEqual(outcome.errors, [
      `expression '${COSTLY}' resulted in error: operation cancelled: actual cost limit exceeded`,
      `expression '${COSTLY}' resulted in error: operation cancelled: actual cost limit exceeded`,
    ]);
  });

  it('stops with one out-of-budget error once the conditions together spent it, even next to a false one', () => {
    const many = compileMatchConditions([
      { name: 'false', expression: 'object.l.size() == 0' },
      ...Array.from({ length: 8 }, (_, i) => ({ name: `costly-${i}`, expression: COSTLY })),
    ]);
    const outcome = evaluateMatchConditions(many, { object: OBJECT, oldObject: null, request: {} }, costOnly());
    assert.deepEqual(outcome, { matches: false, errors: [MATCH_CONDITIONS_OUT_OF_BUDGET] });
    // Cheap conditions are unaffected.
    const cheap = compileMatchConditions([{ name: 'size', expression: 'object.l.size() == 1000' }]);
    assert.deepEqual(evaluateMatchConditions(cheap, { object: OBJECT, oldObject: null, request: {} }), { matches: true, errors: [] });
  });
});
