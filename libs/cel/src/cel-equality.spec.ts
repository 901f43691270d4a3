import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { estimateCelCost } from './cel-cost-estimator.js';
import type { DeclType } from './cel-cost-size.js';
import { CelCompileError, checkCelTyped, compileCel } from './cel-environment.js';
import { CelUrl } from './cel-network.js';

// `==` and `!=` on the Kubernetes library types, as upstream's ref.Val Equal
// (k8s.io/apiserver pkg/cel quantity.go, ip.go, cidr.go, url.go, format.go)
// and library/cost.go price them.

const run = (expr: string, self: unknown = null) => compileCel(expr, { self: 'dyn' }).evaluate({ self });
const refused = (expr: string): string => {
  try {
    compileCel(expr, { self: 'dyn' });
  } catch (err) {
    assert.ok(err instanceof CelCompileError, `${expr}: ${String(err)}`);
    return err.message;
  }
  assert.fail(`${expr} compiled`);
};

describe('CEL equality of Quantity values', () => {
  it('compares by value whatever the suffix, as resource.Quantity.Equal', () => {
    assert.equal(run("quantity('1') == quantity('1000m')"), true);
    assert.equal(run("quantity('1Ki') == quantity('1024')"), true);
    assert.equal(run("quantity('200M') == quantity('0.2G') && quantity('0.2G') == quantity('200M')"), true);
    assert.equal(run("quantity('50k').add(quantity('20')) == quantity('50.02k')"), true);
    assert.equal(run("quantity('1') == quantity('1001m')"), false);
    assert.equal(run("quantity('1G') == quantity('1Gi')"), false);
  });

  it('has != as the negation, and == inside lists and in', () => {
    assert.equal(run("quantity('1') != quantity('1001m')"), true);
    assert.equal(run("quantity('1') != quantity('1000m')"), false);
    assert.equal(run("[quantity('1')] == [quantity('1000m')]"), true);
    assert.equal(run("quantity('1') in [quantity('2'), quantity('1000m')]"), true);
  });

  it('compares values read from the object', () => {
    assert.equal(run('quantity(self.a) == quantity(self.b)', { a: '1Gi', b: '1024Mi' }), true);
    assert.equal(run('quantity(self.a) != quantity(self.b)', { a: '1Gi', b: '1G' }), true);
  });
});

describe('CEL equality of IP and CIDR values', () => {
  it('compares IPs by address (netip.Addr ==): spelling does not matter, family does', () => {
    assert.equal(run("ip('2001:DB8::68') == ip('2001:db8:0:0::68')"), true);
    assert.equal(run("ip('10.0.0.1') == ip('10.0.0.1')"), true);
    assert.equal(run("ip('10.0.0.1') == ip('10.0.0.2')"), false);
    assert.equal(run("ip('1.2.3.4') == ip('::ffff:1.2.3.4')"), false, 'an IPv4-mapped IPv6 address is not the IPv4 address');
    assert.equal(run("ip('::ffff:1.2.3.4') == ip('::ffff:102:304')"), true);
    assert.equal(run("ip('10.0.0.1') != ip('10.0.0.2')"), true);
    assert.equal(run("cidr('10.1.0.0/16').ip() == ip('10.1.0.0')"), true);
  });

  it('compares CIDRs by address as written and prefix length (netip.Prefix ==), not masked', () => {
    assert.equal(run("cidr('10.0.0.0/8') == cidr('10.0.0.0/8')"), true);
    assert.equal(run("cidr('2001:DB8::/32') == cidr('2001:db8::/32')"), true);
    assert.equal(run("cidr('10.0.0.1/8') == cidr('10.0.0.0/8')"), false);
    assert.equal(run("cidr('10.0.0.1/8').masked() == cidr('10.0.0.0/8')"), true);
    assert.equal(run("cidr('10.0.0.0/8') == cidr('10.0.0.0/16')"), false);
    assert.equal(run("cidr('10.0.0.0/8') != cidr('10.0.0.0/16')"), true);
  });
});

describe('CEL equality of URL values', () => {
  it('compares by Go`s URL.String(): scheme case and escaping of the path are normalized', () => {
    assert.equal(run("url('https://example.com/a?b=c') == url('https://example.com/a?b=c')"), true);
    assert.equal(run("url('HTTPS://example.com/a') == url('https://example.com/a')"), true);
    assert.equal(run("url('https://example.com/a b') == url('https://example.com/a%20b')"), true);
    assert.equal(run("url('https://example.com/a') != url('https://example.com/b')"), true);
  });

  it('keeps what String() keeps: host case, a valid escape as written, the query, a lone ?, a #', () => {
    assert.equal(run("url('https://Example.com/') == url('https://example.com/')"), false);
    assert.equal(run("url('https://example.com/%41') == url('https://example.com/A')"), false);
    assert.equal(run("url('https://example.com/?a=1&b=2') == url('https://example.com/?b=2&a=1')"), false);
    assert.equal(run("url('https://example.com/?') == url('https://example.com/')"), false);
    assert.equal(run("url('https://example.com/a#b') == url('https://example.com/a')"), false, 'ParseRequestURI keeps a # in the path');
  });

  it('writes URLs and escaped paths as Go does', () => {
    assert.equal(CelUrl.parse('HTTPS://example.com/a b?x=1').toString(), 'https://example.com/a%20b?x=1');
    assert.equal(CelUrl.parse('https://example.com').toString(), 'https://example.com');
    assert.equal(CelUrl.parse('https:///a').toString(), 'https:///a');
    assert.equal(CelUrl.parse('/a/b?c').toString(), '/a/b?c');
    assert.equal(run("url('https://example.com/%41/[x]!').getEscapedPath()"), '/%41/[x]!', 'validly encoded: as written');
    assert.equal(run("url('https://example.com/%41 é#').getEscapedPath()"), '/A%20%C3%A9%23', 'otherwise escaped afresh');
    assert.deepEqual(run("url('https://example.com/?a=b#c').getQuery()"), { a: ['b#c'] });
  });

  it('refuses what ParseRequestURI refuses: a malformed escape, a control character', () => {
    assert.throws(() => run("url('https://example.com/%zz')"), /invalid URL escape "%zz"/);
    assert.equal(run("isURL('https://example.com/%4')"), false);
    assert.equal(run('isURL("https://example.com/a\\tb")'), false);
  });
});

describe('CEL equality of Format values', () => {
  it('compares named formats by name', () => {
    assert.equal(run("format.dns1123Label() == format.named('dns1123Label').value()"), true);
    assert.equal(run("format.named('dns1123Label').value() == format.named('dns1123Label').value()"), true);
    assert.equal(run('format.dns1123Label() == format.dns1035Label()'), false);
    assert.equal(run('format.dns1123Label() != format.dns1123LabelPrefix()'), true);
  });
});

describe('CEL equality between different types', () => {
  it('refuses two different static types at compile time, as cel-go`s _==_(A, A) does', () => {
    const pairs = [
      ["quantity('1')", "ip('10.0.0.1')"],
      ["ip('10.0.0.1')", "cidr('10.0.0.0/8')"],
      ["url('https://a/')", "'https://a/'"],
      ['format.dns1123Label()', "quantity('1')"],
      ["semver('1.0.0')", "quantity('1')"],
      ["quantity('1')", '1'],
      ["ip('10.0.0.1')", "'10.0.0.1'"],
    ];
    for (const [a, b] of pairs) {
      for (const op of ['==', '!=']) {
        assert.match(refused(`${a} ${op} ${b}`), /no such overload/, `${a} ${op} ${b}`);
        assert.match(refused(`${b} ${op} ${a}`), /no such overload/, `${b} ${op} ${a}`);
      }
    }
  });

  it('lets a dyn operand through compilation; a Quantity then differs from anything else, as its Equal says', () => {
    assert.equal(run("dyn(quantity('1')) == 1"), false);
    assert.equal(run("dyn(quantity('1')) == ip('10.0.0.1')"), false);
    assert.equal(run("self == quantity('1')", '1'), false, 'a string is no Quantity');
    assert.equal(run("dyn(quantity('1')) == quantity('1000m')"), true);
  });

  it('is in the typed checking environment of admission policies too', () => {
    assert.equal(checkCelTyped("quantity(object.a) == quantity('1') && ip(object.b) != ip('::1') && cidr(object.c) == cidr('10.0.0.0/8')", { object: 'dyn' }, {}), undefined);
    assert.equal(checkCelTyped("url(object.u) == url('https://a/') && format.dns1123Label() == format.named(object.f).value()", { object: 'dyn' }, {}), undefined);
    assert.match(checkCelTyped("quantity(object.a) == ip('::1')", { object: 'dyn' }, {}) ?? '', /no such overload/);
  });
});

describe('equality cost', () => {
  const str = (maxElements: number): DeclType => ({ kind: 'string', maxElements, minSerializedSize: 2 });
  const SELF: DeclType = { kind: 'object', maxElements: 0, minSerializedSize: 2, fields: new Map([['a', str(40)], ['b', str(40)]]) };
  const estimate = (expr: string) => estimateCelCost(compileCel(expr, { self: 'dyn' }).ast, SELF);

  it('estimates == as library/cost.go: 1 for Quantity, IP and CIDR (upstream cost_test.go figures)', () => {
    assert.equal(estimate('quantity("200M") == quantity("200M")'), 3);
    assert.equal(estimate('quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")'), 6);
    assert.equal(estimate('quantity("50k").add(quantity("20")) == quantity("50.02k")'), 5);
    assert.equal(estimate("ip('192.168.0.1') == ip('192.168.0.1')"), 5);
    assert.equal(estimate("ip('2001:db8:3333:4444:5555:6666:7777:8888') == ip('192.168.0.1')"), 7);
    assert.equal(estimate("cidr('192.168.0.0/16') == cidr('2001:db8::/32')"), 5);
    // self.a, self.b 2 each; quantity() of 40 characters 4 each; == 1.
    assert.equal(estimate('quantity(self.a) == quantity(self.b)'), 13);
  });

  it('estimates == on URLs by the right-hand side`s size and on Formats by the longest name (64), a tenth each', () => {
    assert.equal(estimate("url('https:://kubernetes.io/') == url('https:://kubernetes.io/')"), 9);
    assert.equal(estimate("url('https:://kubernetes.io/') == url('http://x.b')"), 5);
    assert.equal(estimate("format.named('dns1123Label').value() == format.named('dns1123Label').value()"), 11);
    assert.equal(estimate('format.dns1123Label() == format.dns1035Label()'), 9);
  });

  it('estimates != as cel-go`s generic inequality: by the operands` sizes, unbounded for these types', () => {
    const unbounded = estimate('semver(self.a) != semver(self.b)');
    assert.ok(unbounded > 1e18);
    assert.equal(estimate('quantity(self.a) != quantity(self.b)'), unbounded);
    assert.equal(estimate("ip(self.a) != ip('::1')"), unbounded);
    assert.equal(estimate('!(quantity(self.a) == quantity(self.b))'), 14, 'the negated == is priced as ==');
    // url() has the size of its argument: the smaller one, a tenth.
    assert.equal(estimate("url(self.a) != url('http://x.b')"), 2 + 4 + 1 + 1);
  });
});
