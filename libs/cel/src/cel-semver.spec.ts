import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { estimateCelCost } from './cel-cost-estimator.js';
import type { DeclType } from './cel-cost-size.js';
import { CelBudget, CelCompileError, CelEvaluationError, checkCelTyped, compileCel } from './cel-environment.js';
import { CelSemver, SemverParseError } from './cel-semver.js';

const run = (expr: string, self: unknown = null) => compileCel(expr, { self: 'dyn' }).evaluate({ self });
const failure = (expr: string, self: unknown = null): string => {
  try {
    run(expr, self);
  } catch (err) {
    assert.ok(err instanceof CelEvaluationError, `${expr}: ${String(err)}`);
    return err.message;
  }
  assert.fail(`${expr} evaluated without error`);
};

describe('CEL semver library (upstream semver_test.go cases)', () => {
  it('parses a version and reads major, minor and patch', () => {
    assert.ok(run('semver("1.2.3")') instanceof CelSemver);
    assert.equal(run('semver("1.2.3").major()'), 1n);
    assert.equal(run('semver("1.2.3").minor()'), 2n);
    assert.equal(run('semver("1.2.3").patch()'), 3n);
    assert.equal(run('semver("1.2.3") == semver("1.2.3")'), true);
  });

  it('refuses an invalid version with blang/semver`s message', () => {
    assert.equal(failure('semver("v1.0")'), 'No Major.Minor.Patch elements found');
  });

  it('isSemver without normalization: only strict MAJOR.MINOR.PATCH[-PRE][+BUILD]', () => {
    assert.equal(run('isSemver("1.2.3-beta.1+build.1")'), true);
    for (const bad of ['', 'v1.0.0', ' 1.0.0', '1. 0.0', '1.0.0 ', '01.01.01', '1', '1.1']) {
      assert.equal(run('isSemver(self)', bad), false, JSON.stringify(bad));
    }
  });

  it('isSemver with normalization: a leading v, leading zeroes and short versions pass, spaces do not', () => {
    for (const good of ['v1.0.0', '01.01.01', '1', '1.1']) assert.equal(run('isSemver(self, true)', good), true, JSON.stringify(good));
    for (const bad of ['', ' 1.0.0', '1. 0.0', '1.0.0 ']) assert.equal(run('isSemver(self, true)', bad), false, JSON.stringify(bad));
    assert.equal(run('isSemver("v1.0.0", false)'), false);
  });

  it('refuses isSemver on a list at compile time', () => {
    assert.throws(() => compileCel('isSemver([1, 2, 3])', {}), (err: unknown) => err instanceof CelCompileError && /overload/i.test(err.message));
  });

  it('compares: equality (normalized too), isLessThan, isGreaterThan, compareTo', () => {
    assert.equal(run('semver("v01.01", true) == semver("1.1.0")'), true);
    assert.equal(run('semver("1.2.3") == semver("1.0.0")'), false);
    assert.equal(run('semver("1.2.3") != semver("1.0.0")'), true);
    assert.equal(run('semver("1.0.0").isLessThan(semver("1.2.3"))'), true);
    assert.equal(run('semver("1.0.0").isLessThan(semver("1.0.0"))'), false);
    assert.equal(run('semver("1.2.3").isGreaterThan(semver("1.0.0"))'), true);
    assert.equal(run('semver("1.0.0").isGreaterThan(semver("1.0.0"))'), false);
    assert.equal(run('semver("1.2.3").compareTo(semver("1.2.3"))'), 0n);
    assert.equal(run('semver("1.0.0").compareTo(semver("1.2.3"))'), -1n);
    assert.equal(run('semver("1.2.3").compareTo(semver("1.0.0"))'), 1n);
  });

  it('is in the typed checking environment of admission policies too', () => {
    assert.equal(checkCelTyped('semver(object.v).isLessThan(semver("2.0.0"))', { object: 'dyn' }, {}), undefined);
    assert.match(checkCelTyped('semver(object.v).major() == "1"', { object: 'dyn' }, {}) ?? '', /overload/);
  });
});

describe('CelSemver (blang/semver v4 behaviour)', () => {
  const parseError = (s: string, normalize = false): string => {
    try {
      if (normalize) CelSemver.normalizeAndParse(s);
      else CelSemver.parse(s);
    } catch (err) {
      assert.ok(err instanceof SemverParseError);
      return err.message;
    }
    assert.fail(`${JSON.stringify(s)} parsed`);
  };

  it('words each refusal as blang does, quoting with Go`s %q', () => {
    assert.equal(parseError(''), 'Version string empty');
    assert.equal(parseError('1.2'), 'No Major.Minor.Patch elements found');
    assert.equal(parseError('a.2.3'), 'Invalid character(s) found in major number "a"');
    assert.equal(parseError('01.2.3'), 'Major number must not contain leading zeroes "01"');
    assert.equal(parseError('1.x.3'), 'Invalid character(s) found in minor number "x"');
    assert.equal(parseError('1.02.3'), 'Minor number must not contain leading zeroes "02"');
    assert.equal(parseError('1.2.3.4'), 'Invalid character(s) found in patch number "3.4"');
    assert.equal(parseError('1.2.03'), 'Patch number must not contain leading zeroes "03"');
    assert.equal(parseError('1..3'), 'strconv.ParseUint: parsing "": invalid syntax');
    assert.equal(parseError('18446744073709551616.0.0'), 'strconv.ParseUint: parsing "18446744073709551616": value out of range');
    assert.equal(parseError('1.2.3-'), 'Prerelease is empty');
    assert.equal(parseError('1.2.3-a..b'), 'Prerelease is empty');
    assert.equal(parseError('1.2.3-01'), 'Numeric PreRelease version must not contain leading zeroes "01"');
    assert.equal(parseError('1.2.3-a_b'), 'Invalid character(s) found in prerelease "a_b"');
    assert.equal(parseError('1.2.3+'), 'Build meta data is empty');
    assert.equal(parseError('1.2.3+a+b'), 'Invalid character(s) found in build meta data "a+b"');
    assert.equal(parseError('1.2.3-\t'), 'Invalid character(s) found in prerelease "\\t"');
    assert.equal(parseError('1.2-rc', true), 'short version cannot contain PreRelease/Build meta data');
  });

  it('accepts what blang accepts: uint64 numbers, hyphens in identifiers, leading zeroes in build metadata', () => {
    assert.equal(CelSemver.parse('18446744073709551615.0.0').major, 18446744073709551615n);
    assert.equal(CelSemver.parse('1.2.3-a-b.0.x-1+001.sha-5').toString(), '1.2.3-a-b.0.x-1+001.sha-5');
    assert.equal(CelSemver.parse('1.2.3-99999999999999999999a').toString(), '1.2.3-99999999999999999999a');
  });

  it('normalizes as upstream: one v dropped, leading zeroes stripped per part, minor and patch filled', () => {
    assert.equal(CelSemver.normalizeAndParse('v01.002').toString(), '1.2.0');
    assert.equal(CelSemver.normalizeAndParse('1.2.00-rc.1').toString(), '1.2.0-rc.1');
    assert.equal(CelSemver.normalizeAndParse('1.2.0-rc').toString(), '1.2.0-rc');
    assert.equal(CelSemver.tryParse('vv1.0.0', true), undefined);
    assert.equal(CelSemver.tryParse('1.2.3-01', true), undefined, 'pre-release identifiers are not normalized');
  });

  it('orders by SemVer precedence, ignoring build metadata', () => {
    const order = ['1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', '1.0.0-beta', '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-rc.1', '1.0.0', '2.0.0', '2.1.0', '2.1.1'];
    for (let i = 0; i < order.length - 1; i++) {
      assert.equal(CelSemver.parse(order[i]).compareTo(CelSemver.parse(order[i + 1])), -1, `${order[i]} < ${order[i + 1]}`);
      assert.equal(CelSemver.parse(order[i + 1]).compareTo(CelSemver.parse(order[i])), 1);
    }
    assert.equal(run('semver("1.0.0+a") == semver("1.0.0+b")'), true);
    assert.equal(run('semver("1.0.0-2") .isLessThan(semver("1.0.0-10"))'), true, 'numeric identifiers compare as numbers');
  });

  it('wraps major() above int64 as Go`s types.Int(uint64) does', () => {
    assert.equal(run('semver("18446744073709551615.0.0").major()'), -1n);
  });
});

describe('semver cost', () => {
  const str = (maxElements: number): DeclType => ({ kind: 'string', maxElements, minSerializedSize: 2 });
  const SELF: DeclType = { kind: 'object', maxElements: 0, minSerializedSize: 2, fields: new Map([['s', str(40)]]) };
  const estimate = (expr: string) => estimateCelCost(compileCel(expr, { self: 'dyn' }).ast, SELF);

  it('estimates as library/cost.go: parsing a tenth of the length, accessors and comparisons 1', () => {
    // self.s 2; semver() ceil(40 × 0.1) = 4.
    assert.equal(estimate('semver(self.s)'), 6);
    assert.equal(estimate('isSemver(self.s)'), 6);
    assert.equal(estimate('isSemver(self.s, true)'), 6);
    assert.equal(estimate('semver(self.s, true).major()'), 7);
    // the literal '1.0.0' parses for ceil(5 × 0.1) = 1.
    assert.equal(estimate('semver(self.s).isLessThan(semver("1.0.0"))'), 8);
    assert.equal(estimate('semver(self.s).compareTo(semver("1.0.0")) < 0'), 9);
    assert.equal(estimate('semver(self.s) == semver("1.0.0")'), 8);
  });

  it('charges a parse at run time by the string`s length, as CallCost does', () => {
    const spent = (s: string, expr = 'isSemver(self)') => {
      const budget = new CelBudget();
      const before = budget.remaining;
      compileCel(expr, { self: 'dyn' }).evaluate({ self: s }, budget);
      return before - budget.remaining;
    };
    const short = spent('1.0.0');
    assert.equal(spent(`1.0.0-${'a'.repeat(994)}`) - short, 99, 'ceil(1000 × 0.1) − ceil(5 × 0.1)');
    assert.equal(spent(`1.0.0-${'a'.repeat(994)}`, 'isSemver(self, true)') - spent('1.0.0', 'isSemver(self, true)'), 99);
    assert.equal(spent(`1.0.0-${'é'.repeat(994)}`) - short, 99, 'counted in code points, not bytes');
  });
});
