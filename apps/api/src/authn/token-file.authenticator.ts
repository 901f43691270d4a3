import { readFileSync } from 'node:fs';
import type { UserInfo } from '@plinth/apimachinery';
import type { AuthenticationResult, TokenAuthenticator } from './authenticator.js';

/** Splits one CSV line (RFC 4180 quoting, leading spaces trimmed as Go's TrimLeadingSpace). Throws on a broken quote. */
export function parseCsvLine(line: string): string[] {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    while (line[i] === ' ' || line[i] === '\t') i++;
    let field = '';
    if (line[i] === '"') {
      i++;
      for (;;) {
        if (i >= line.length) throw new Error('extraneous or missing " in quoted-field');
        if (line[i] === '"') {
          if (line[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += line[i++];
      }
      if (i < line.length && line[i] !== ',') throw new Error('extraneous or missing " in quoted-field');
    } else {
      const end = line.indexOf(',', i);
      field = end < 0 ? line.slice(i) : line.slice(i, end);
      if (field.includes('"')) throw new Error('bare " in non-quoted-field');
      i = end < 0 ? line.length : end;
    }
    fields.push(field);
    if (i >= line.length) return fields;
    i++; // the comma
  }
}

/**
 * Parses upstream's `--token-auth-file` format: `token,user,uid[,"group1,group2"]`
 * per line; blank lines are skipped; a later duplicate token wins. Throws
 * naming the line when a record has fewer than three fields or an empty token.
 */
export function parseTokenFile(text: string, source = 'token file'): Map<string, UserInfo> {
  const tokens = new Map<string, UserInfo>();
  const lines = text.split(/\r?\n/);
  lines.forEach((line, n) => {
    if (line.trim() === '') return;
    let record: string[];
    try {
      record = parseCsvLine(line);
    } catch (err) {
      throw new Error(`${source} line ${n + 1}: ${(err as Error).message}`);
    }
    if (record.length < 3) throw new Error(`${source} line ${n + 1}: must have at least 3 columns (token, user name, user uid), found ${record.length}`);
    if (record[0] === '') throw new Error(`${source} line ${n + 1}: empty token`);
    const groups = record.length > 3 && record[3] !== '' ? record[3].split(',').map((g) => g.trim()).filter((g) => g !== '') : [];
    tokens.set(record[0], { username: record[1], uid: record[2], groups });
  });
  return tokens;
}

/** Static tokens from a `--token-auth-file` style file, read once at start-up. */
export class TokenFileAuthenticator implements TokenAuthenticator {
  readonly name = 'token-file';

  constructor(private readonly tokens: Map<string, UserInfo>) {}

  /** Reads and parses `file`; throws (stopping start-up) when it cannot. */
  static fromFile(file: string): TokenFileAuthenticator {
    return new TokenFileAuthenticator(parseTokenFile(readFileSync(file, 'utf8'), file));
  }

  /** Null for an unknown token (another authenticator may know it). */
  authenticateToken(token: string): AuthenticationResult | null {
    const user = this.tokens.get(token);
    return user ? { user: { ...user, groups: [...user.groups] } } : null;
  }
}
