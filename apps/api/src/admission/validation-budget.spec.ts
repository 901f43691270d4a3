import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '@plinth/apimachinery';
import { TenantValidationBudget } from './validation-budget.js';

describe('TenantValidationBudget', () => {
  it('answers 429 with Retry-After once a tenant spent its burst, refills over time, and leaves other tenants alone', () => {
    const b = new TenantValidationBudget({ msPerSecond: 100, burstMs: 500 });
    b.check('noisy', 0);
    b.charge('noisy', 750, 0);
    assert.throws(
      () => b.check('noisy', 10),
      (e: ApiError) => e instanceof ApiError && e.code === 429 && e.status.reason === 'TooManyRequests' && e.headers['Retry-After'] === '3',
    );
    b.check('quiet', 10);
    b.check('noisy', 2600);
  });
});
