import { parseHostList, usesHostList } from '@plinth/storage';

/** A shard named in PLINTH_SHARDS. */
export interface ConfiguredShard {
  name: string;
  /** Its libpq URL (with its password: kept in a Secret, never printed). */
  url: string;
}

const LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * Parses PLINTH_SHARDS: `name=postgres://…` pairs separated by spaces
 * (URLs never contain a space). Throws an Error naming the bad pair (its
 * caller redacts passwords before printing). Pure.
 */
export function parseShardList(value: string): ConfiguredShard[] {
  const out: ConfiguredShard[] = [];
  for (const pair of value.split(/\s+/).filter(Boolean)) {
    const eq = pair.indexOf('=');
    const name = eq > 0 ? pair.slice(0, eq) : '';
    const url = eq > 0 ? pair.slice(eq + 1) : '';
    if (!LABEL.test(name) || name === 'default') throw new Error(`${JSON.stringify(pair)}: a shard is name=url, its name a DNS-1123 label other than "default"`);
    let parsed: URL;
    try {
      parsed = new URL(usesHostList(url) ? parseHostList(url).urlFor(0) : url);
    } catch {
      throw new Error(`${JSON.stringify(pair)}: the URL of shard ${name} does not parse`);
    }
    if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') throw new Error(`${JSON.stringify(pair)}: the URL of shard ${name} must be postgres:// or postgresql://`);
    if (out.some((s) => s.name === name)) throw new Error(`shard ${name} is named twice`);
    out.push({ name, url });
  }
  return out;
}
