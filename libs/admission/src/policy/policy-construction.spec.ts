import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rewriteObjectConstruction } from './policy-construction.js';

describe('rewriteObjectConstruction', () => {
  it('turns nested message constructions into dyn-valued map literals', () => {
    assert.equal(
      rewriteObjectConstruction('Object{spec: Object.spec{replicas: 3, tags: ["a", "b"]}}'),
      '{"spec": dyn({"replicas": dyn(3), "tags": dyn(["a", "b"])})}',
    );
    assert.equal(rewriteObjectConstruction('[JSONPatch{op: "add", path: "/x", value: f(a, b)}]'), '[{"op": dyn("add"), "path": dyn("/x"), "value": dyn(f(a, b))}]');
    assert.equal(rewriteObjectConstruction('Object{}'), '{}');
  });

  it('leaves string literals, maps and member access alone', () => {
    assert.equal(rewriteObjectConstruction('"Object{a: 1}" + object.spec.x'), '"Object{a: 1}" + object.spec.x');
    assert.equal(rewriteObjectConstruction('{"a": 1}.a == 1'), '{"a": 1}.a == 1');
    assert.equal(rewriteObjectConstruction("cond ? Object{data: {'k': 'v'}} : Object{}"), "cond ? {\"data\": dyn({'k': 'v'})} : {}");
  });

  it('refuses a malformed construction', () => {
    assert.throws(() => rewriteObjectConstruction('Object{1: 2}'), /object construction/);
  });
});
