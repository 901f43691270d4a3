/**
 * Kubernetes label selectors: the string grammar of
 * k8s.io/apimachinery/pkg/labels (as in `?labelSelector=`), matching, the
 * canonical string form, and conversion from a metav1.LabelSelector.
 */
import { goQuote } from '../text/go-strings.js';
import {
  SelectorError,
  aggregateText,
  invalidValueText,
  labelKeyErrors,
  labelValueErrors,
} from './selector-error.js';

/**
 * How a requirement relates a key to its values. `Equals` (`=`) and
 * `DoubleEquals` (`==`) match alike but stay distinct so a selector renders
 * back as written; `GreaterThan`/`LessThan` are upstream's `>`/`<`.
 */
export type LabelOperator =
  | 'In'
  | 'NotIn'
  | 'Equals'
  | 'DoubleEquals'
  | 'NotEquals'
  | 'Exists'
  | 'DoesNotExist'
  | 'GreaterThan'
  | 'LessThan';

/** One condition on one label. Values are empty for Exists/DoesNotExist. */
export interface Requirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

/** An AND of requirements, sorted by key; no requirements matches everything. */
export interface LabelSelector {
  requirements: Requirement[];
}

/** A metav1.LabelSelectorRequirement as it arrives in JSON. */
export interface MetaV1LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: string[] | null;
}

/** A metav1.LabelSelector as it arrives in JSON. */
export interface MetaV1LabelSelector {
  matchLabels?: Record<string, string> | null;
  matchExpressions?: MetaV1LabelSelectorRequirement[] | null;
}

type TokenKind = 'end' | 'identifier' | 'in' | 'notin' | '!' | '=' | '==' | '!=' | '>' | '<' | '(' | ')' | ',';

interface Token {
  kind: TokenKind;
  literal: string;
}

const SYMBOL_CHARS = new Set(['=', '!', '(', ')', ',', '>', '<']);
const SYMBOL_TOKENS = new Set(['=', '==', '!=', '!', '(', ')', ',', '>', '<']);
const WHITESPACE = new Set([' ', '\t', '\r', '\n']);
/** Upstream reads a NUL byte exactly like the end of input; so does this lexer. */
const END = '\0';
const BINARY_OPERATORS = 'in, notin, =, ==, !=, gt, lt';

/** Splits a selector into tokens the way upstream's Lexer does, including its quirks. */
class Lexer {
  private pos = 0;

  constructor(private readonly input: string) {}

  tokens(): Token[] {
    const out: Token[] = [];
    for (;;) {
      let ch = this.read();
      while (WHITESPACE.has(ch)) ch = this.read();
      if (ch === END) {
        out.push({ kind: 'end', literal: '' });
        return out;
      }
      this.pos--;
      out.push(SYMBOL_CHARS.has(ch) ? this.symbol() : this.word());
    }
  }

  private read(): string {
    return this.pos < this.input.length ? this.input[this.pos++] : END;
  }

  /** The longest run of symbol characters that is still an operator: `!=` stays whole, `=!` splits. */
  private symbol(): Token {
    let buffer = '';
    let last = '';
    for (;;) {
      const ch = this.read();
      if (ch === END) break;
      if (!SYMBOL_CHARS.has(ch)) {
        this.pos--;
        break;
      }
      buffer += ch;
      if (SYMBOL_TOKENS.has(buffer)) last = buffer;
      else {
        this.pos--;
        break;
      }
    }
    return { kind: last as TokenKind, literal: last };
  }

  private word(): Token {
    let word = '';
    for (;;) {
      const ch = this.read();
      if (ch === END) break;
      if (SYMBOL_CHARS.has(ch) || WHITESPACE.has(ch)) {
        this.pos--;
        break;
      }
      word += ch;
    }
    const kind: TokenKind = word === 'in' ? 'in' : word === 'notin' ? 'notin' : 'identifier';
    return { kind, literal: word };
  }
}

/** Where `in`/`notin` are read as plain words: everywhere except the operator slot. */
type Context = 'values' | 'operator';

const OPERATOR_TOKENS: Partial<Record<TokenKind, LabelOperator>> = {
  in: 'In',
  notin: 'NotIn',
  '=': 'Equals',
  '==': 'DoubleEquals',
  '!=': 'NotEquals',
  '>': 'GreaterThan',
  '<': 'LessThan',
};

/** Recursive-descent parser over the token list, mirroring upstream's error texts. */
class Parser {
  private position = 0;

  constructor(private readonly items: Token[]) {}

  parse(): Requirement[] {
    const requirements: Requirement[] = [];
    for (;;) {
      const next = this.lookahead('values');
      if (next.kind === 'end') return requirements;
      if (!startsRequirement(next)) fail(`found '${next.literal}', expected: !, identifier, or 'end of string'`);
      requirements.push(this.wrapped());
      const after = this.consume('values');
      if (after.kind === 'end') return requirements;
      if (after.kind !== ',') fail(`found '${after.literal}', expected: ',' or 'end of string'`);
      const following = this.lookahead('values');
      if (!startsRequirement(following)) fail(`found '${following.literal}', expected: identifier after ','`);
    }
  }

  private wrapped(): Requirement {
    try {
      return this.requirement();
    } catch (err) {
      if (err instanceof SelectorError) throw new SelectorError(`unable to parse requirement: ${err.message}`);
      throw err;
    }
  }

  private requirement(): Requirement {
    const { key, unary } = this.keyAndUnaryOperator();
    if (unary) return newRequirement(key, unary, []);
    const operator = this.operator();
    const values = operator === 'In' || operator === 'NotIn' ? this.valueSet() : this.exactValue();
    return newRequirement(key, operator, [...new Set(values)].sort());
  }

  private keyAndUnaryOperator(): { key: string; unary?: 'Exists' | 'DoesNotExist' } {
    let tok = this.consume('values');
    const negated = tok.kind === '!';
    if (negated) tok = this.consume('values');
    if (tok.kind !== 'identifier') fail(`found '${tok.literal}', expected: identifier`);
    const errs = labelKeyErrors(tok.literal);
    // Upstream validates here with a nil field path, hence the literal "<nil>".
    if (errs.length > 0) fail(invalidValueText('<nil>', tok.literal, errs.join('; ')));
    if (negated) return { key: tok.literal, unary: 'DoesNotExist' };
    const next = this.lookahead('values').kind;
    return next === 'end' || next === ',' ? { key: tok.literal, unary: 'Exists' } : { key: tok.literal };
  }

  private operator(): LabelOperator {
    const tok = this.consume('operator');
    const op = OPERATOR_TOKENS[tok.kind];
    if (op === undefined) fail(`found '${tok.literal}', expected: ${BINARY_OPERATORS}`);
    return op;
  }

  /** `(a,b)`; empty members such as `()`, `(a,)` or `(,a)` stand for the empty value. */
  private valueSet(): string[] {
    const open = this.consume('values');
    if (open.kind !== '(') fail(`found '${open.literal}' expected: '('`);
    const next = this.lookahead('values');
    if (next.kind === ')') {
      this.consume('values');
      return [''];
    }
    if (next.kind !== 'identifier' && next.kind !== ',') fail(`found '${next.literal}', expected: ',', ')' or identifier`);
    const values = this.identifiers();
    this.consume('values');
    return values;
  }

  /** Reads up to, not including, the closing parenthesis. */
  private identifiers(): string[] {
    const values: string[] = [];
    for (;;) {
      const tok = this.consume('values');
      if (tok.kind === 'identifier') {
        values.push(tok.literal);
        const next = this.lookahead('values');
        if (next.kind === ')') return values;
        if (next.kind !== ',') fail(`found '${next.literal}', expected: ',' or ')'`);
        continue;
      }
      if (tok.kind !== ',') fail(`found '${tok.literal}', expected: ',', or identifier`);
      if (values.length === 0) values.push('');
      const next = this.lookahead('values').kind;
      if (next === ')') {
        values.push('');
        return values;
      }
      if (next === ',') values.push('');
    }
  }

  private exactValue(): string[] {
    const next = this.lookahead('values');
    if (next.kind === 'end' || next.kind === ',') return [''];
    const tok = this.consume('values');
    if (tok.kind !== 'identifier') fail(`found '${tok.literal}', expected: identifier`);
    return [tok.literal];
  }

  private lookahead(context: Context): Token {
    const tok = this.items[Math.min(this.position, this.items.length - 1)];
    if (context === 'values' && (tok.kind === 'in' || tok.kind === 'notin')) return { kind: 'identifier', literal: tok.literal };
    return tok;
  }

  private consume(context: Context): Token {
    const tok = this.lookahead(context);
    this.position++;
    return tok;
  }
}

function startsRequirement(tok: Token): boolean {
  return tok.kind === 'identifier' || tok.kind === '!';
}

function fail(message: string): never {
  throw new SelectorError(message);
}

/** Go's strconv.ParseInt(s, 10, 64); undefined where Go reports an error. */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n >= -(2n ** 63n) && n < 2n ** 63n ? n : undefined;
}

/** The arity and integer checks of labels.NewRequirement (nil path), as error texts. */
function operatorArityErrors(operator: LabelOperator, values: string[]): string[] {
  switch (operator) {
    case 'In':
    case 'NotIn':
      return values.length === 0 ? [invalidValueText('values', null, "for 'in', 'notin' operators, values set can't be empty")] : [];
    case 'Equals':
    case 'DoubleEquals':
    case 'NotEquals':
      return values.length === 1 ? [] : [invalidValueText('values', values.length ? values : null, 'exact-match compatibility requires one single value')];
    case 'Exists':
    case 'DoesNotExist':
      return values.length === 0 ? [] : [invalidValueText('values', values, 'values set must be empty for exists and does not exist')];
    case 'GreaterThan':
    case 'LessThan': {
      const errs =
        values.length === 1 ? [] : [invalidValueText('values', values.length ? values : null, "for 'Gt', 'Lt' operators, exactly one value is required")];
      values.forEach((v, i) => {
        if (parseInt64(v) === undefined) errs.push(invalidValueText(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"));
      });
      return errs;
    }
  }
}

/** labels.NewRequirement: validates everything, throws the aggregate of all errors. */
function newRequirement(key: string, operator: LabelOperator, values: string[]): Requirement {
  const errs: string[] = [];
  const keyErrs = labelKeyErrors(key);
  if (keyErrs.length > 0) errs.push(invalidValueText('key', key, keyErrs.join('; ')));
  errs.push(...operatorArityErrors(operator, values));
  values.forEach((v, i) => {
    const valueErrs = labelValueErrors(v);
    if (valueErrs.length > 0) errs.push(invalidValueText(`values[${i}][${key}]`, v, valueErrs.join('; ')));
  });
  if (errs.length > 0) throw new SelectorError(aggregateText(errs));
  return { key, operator, values };
}

function sortByKey(requirements: Requirement[]): Requirement[] {
  return requirements.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * Parses a `labelSelector` query string (`=`, `==`, `!=`, `in (…)`,
 * `notin (…)`, `key`, `!key`, `>`, `<`, comma-separated, whitespace
 * tolerant). '' matches everything. Values of `in`/`notin` come back sorted
 * and de-duplicated; requirements sorted by key (stable).
 * Throws SelectorError with upstream's message on any syntax or validation error.
 */
export function parseLabelSelector(s: string): LabelSelector {
  const requirements = new Parser(new Lexer(s).tokens()).parse();
  return { requirements: sortByKey(requirements) };
}

function requirementMatches(r: Requirement, labels: Record<string, string>): boolean {
  const has = Object.hasOwn(labels, r.key);
  const value = has ? labels[r.key] : '';
  switch (r.operator) {
    case 'In':
    case 'Equals':
    case 'DoubleEquals':
      return has && r.values.includes(value);
    case 'NotIn':
    case 'NotEquals':
      return !has || !r.values.includes(value);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'GreaterThan':
    case 'LessThan': {
      const actual = has ? parseInt64(value) : undefined;
      const bound = r.values.length === 1 ? parseInt64(r.values[0]) : undefined;
      if (actual === undefined || bound === undefined) return false;
      return r.operator === 'GreaterThan' ? actual > bound : actual < bound;
    }
  }
}

/**
 * True when every requirement holds for `labels` (undefined = no labels).
 * As upstream, `!=` and `notin` match objects lacking the key; `>`/`<`
 * need an integer label value. Does not mutate its inputs.
 */
export function matchesLabels(sel: LabelSelector, labels: Record<string, string> | undefined): boolean {
  const present = labels ?? {};
  return sel.requirements.every((r) => requirementMatches(r, present));
}

const RENDERED_OPERATORS: Record<LabelOperator, string> = {
  In: ' in ',
  NotIn: ' notin ',
  Equals: '=',
  DoubleEquals: '==',
  NotEquals: '!=',
  GreaterThan: '>',
  LessThan: '<',
  Exists: '',
  DoesNotExist: '',
};

function renderRequirement(r: Requirement): string {
  if (r.operator === 'Exists') return r.key;
  if (r.operator === 'DoesNotExist') return `!${r.key}`;
  const values = r.values.length === 1 ? r.values[0] : [...r.values].sort().join(',');
  const set = r.operator === 'In' || r.operator === 'NotIn';
  return `${r.key}${RENDERED_OPERATORS[r.operator]}${set ? `(${values})` : values}`;
}

/**
 * The canonical string form, as upstream's Selector.String(): requirements
 * in stored order joined by ',', multi-values sorted, e.g. `a in (x,y),!b,c!=d`.
 * '' for a selector that matches everything; re-parses to an equivalent selector.
 */
export function renderLabelSelector(sel: LabelSelector): string {
  return sel.requirements.map(renderRequirement).join(',');
}

const METAV1_OPERATORS = new Map<string, LabelOperator>([
  ['In', 'In'],
  ['NotIn', 'NotIn'],
  ['Exists', 'Exists'],
  ['DoesNotExist', 'DoesNotExist'],
]);

/**
 * Converts a metav1.LabelSelector (webhook namespaceSelector/objectSelector)
 * as metav1.LabelSelectorAsSelector does: matchLabels become `=` requirements,
 * matchExpressions keep their values in the given order. `{}` matches
 * everything; unlike upstream (which returns Nothing), null/undefined also
 * matches everything. Does not mutate its input.
 * Throws SelectorError with upstream's text for a bad operator, key or value.
 */
export function labelSelectorFromMetav1(sel: MetaV1LabelSelector | null | undefined): LabelSelector {
  if (sel === null || sel === undefined) return { requirements: [] };
  const requirements: Requirement[] = [];
  const matchLabels = sel.matchLabels ?? {};
  // Go walks the map in random order; sorting makes the first reported error deterministic.
  for (const key of Object.keys(matchLabels).sort()) {
    requirements.push(newRequirement(key, 'Equals', [matchLabels[key]]));
  }
  for (const expr of sel.matchExpressions ?? []) {
    const operator = METAV1_OPERATORS.get(expr.operator);
    if (operator === undefined) throw new SelectorError(`${goQuote(String(expr.operator ?? ''))} is not a valid label selector operator`);
    requirements.push(newRequirement(String(expr.key ?? ''), operator, [...(expr.values ?? [])]));
  }
  return { requirements: sortByKey(requirements) };
}
