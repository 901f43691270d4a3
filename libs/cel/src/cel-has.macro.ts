import type { Environment } from '@marcbachmann/cel-js';
import { HAS_MACRO } from './cel-source.js';

/**
 * CEL's `has(e.f)` presence test for any operand `e` (cel-js's built-in
 * macro only accepts identifier chains such as `has(self.a.b)`, while
 * real CRDs write `has(self.matches[0].path)`). Registered under
 * {@link HAS_MACRO}; expressions are rewritten to call it.
 */

interface AstNode {
  op: string;
  args: unknown;
}

interface Checker {
  check(node: unknown, ctx: unknown): unknown;
  getType(name: string): unknown;
  createError(code: string, message: string, node: unknown): Error;
}

interface Evaluator {
  run(node: unknown, ctx: unknown): unknown;
}

interface HasMacro {
  args: AstNode[];
}

function selection(macro: HasMacro): { operand: unknown; field: string } {
  const node = macro.args[0];
  const [operand, field] = node.args as [unknown, string];
  return { operand, field };
}

function present(obj: unknown, field: string): boolean {
  if (obj instanceof Map) return obj.has(field);
  if (obj !== null && typeof obj === 'object' && !Array.isArray(obj)) return Object.hasOwn(obj, field) && (obj as Record<string, unknown>)[field] !== undefined;
  throw new Error(`invalid type for field selection.`);
}

/** Registers the general `has` macro on `env`. */
export function registerHasMacro(env: Environment): void {
  env.registerFunction(`${HAS_MACRO}(ast): bool`, (({ args }: { args: AstNode[] }) => ({
    args,
    async: false,
    typeCheck(checker: Checker, macro: HasMacro, ctx: unknown) {
      const node = macro.args[0];
      if (!node || (node.op !== '.' && node.op !== '.?')) throw checker.createError('invalid_macro_argument', 'invalid argument to has() macro', node);
      checker.check(selection(macro).operand, ctx);
      return checker.getType('bool');
    },
    evaluate(ev: Evaluator, macro: HasMacro, ctx: unknown) {
      const { operand, field } = selection(macro);
      return present(ev.run(operand, ctx), field);
    },
  })) as never);
}
