/**
 * Encodes a list body `{ ...envelope, [arrayKey]: items }` as JSON in pieces
 * (head, then items in any number of batches, then tail) whose concatenation
 * is byte for byte `JSON.stringify(body, null, pretty ? 2 : undefined) + '\n'`,
 * the whole-body answer: the envelope keeps its key order and the array is
 * its last key. Lets a list be written while it is read. Stateful (it knows
 * whether an item was written); mutates nothing it is given.
 */
export class JsonListEncoder {
  private readonly open: string;
  private readonly closeEmpty: string;
  private first = true;

  constructor(
    envelope: Record<string, unknown>,
    arrayKey: string,
    private readonly pretty: boolean,
  ) {
    // The envelope with an empty array, split at that array: everything up to
    // `[` is the head; what follows is the tail of an empty list.
    const whole = JSON.stringify({ ...envelope, [arrayKey]: [] }, null, pretty ? 2 : undefined);
    const at = whole.lastIndexOf('[]');
    this.open = whole.slice(0, at + 1);
    this.closeEmpty = whole.slice(at + 1) + '\n';
  }

  /** Everything before the first item. */
  head(): string {
    return this.open;
  }

  /** The next items, with their separators; '' for none. */
  items(items: unknown[]): string {
    let out = '';
    for (const item of items) {
      const sep = this.first ? '' : ',';
      this.first = false;
      // Indented by splitting at '\n' only: a regex's ^ would also match after U+2028, which JSON leaves unescaped.
      out += this.pretty ? `${sep}\n    ${JSON.stringify(item, null, 2).replaceAll('\n', '\n    ')}` : sep + JSON.stringify(item);
    }
    return out;
  }

  /** Everything after the last item, ending with the newline every answer ends with. */
  tail(): string {
    if (this.first) return this.closeEmpty;
    return this.pretty ? '\n  ]\n}\n' : ']}\n';
  }
}
