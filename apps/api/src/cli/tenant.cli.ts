import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { identitiesIn } from '../snapshots/snapshot-secrets.js';
import { readCaller } from './caller-kubeconfig.js';
import { cloneTenant, exportSnapshot, importSnapshot, restoreFromHistory } from './snapshot-client.js';

const USAGE = `usage: npm run tenant -- export <tenant> [--at <revision or RFC 3339 time>] [--recipient <age public key>]... > <file>
       npm run tenant -- import <new tenant> [--shard <shard>] [--identity <key file>]... [--replace] < <file>
       npm run tenant -- clone <tenant> <new tenant> [--at <revision or RFC 3339 time>] [--shard <shard>]
       npm run tenant -- restore <tenant> --at <revision or RFC 3339 time> <namespace/NAME or RESOURCE/NAME>... [-n <namespace>]
options: [--kubeconfig <file>] [--context <name>]

Snapshots of a tenant (docs/snapshots.md), through the API with your kubeconfig
(default: $KUBECONFIG, else ./.plinth/kubeconfig). Secrets in a snapshot are
sealed to the age recipients named with --recipient; import opens them with
the age identity files named with --identity. restore brings namespaces (with
everything in them) and objects of a live tenant back from the change history;
RESOURCE is plural[.group] as kubectl names it, its namespace given with -n.`;

/** Where the CLI reads and writes (the process's own streams, or a test's). */
export interface TenantCliIo {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
}

async function readAll(input: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of input) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks);
}

/** Runs `npm run tenant -- …` with `argv`; resolves with the exit code (0 done, 1 failed, 2 usage). Failures print one line on stderr. */
export async function runTenantCli(argv: string[], env: NodeJS.ProcessEnv = process.env, io: TenantCliIo = process): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        at: { type: 'string' },
        recipient: { type: 'string', multiple: true },
        identity: { type: 'string', multiple: true },
        shard: { type: 'string' },
        namespace: { type: 'string', short: 'n' },
        replace: { type: 'boolean' },
        kubeconfig: { type: 'string' },
        context: { type: 'string' },
        help: { type: 'boolean' },
      },
    });
  } catch (err) {
    io.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, ...args] = positionals;
  const needs: Record<string, number> = { export: 1, import: 1, clone: 2, restore: 2 };
  if (command === 'restore' && !values.at && !values.help) {
    io.stderr.write(`restore needs --at <revision or RFC 3339 time>\n${USAGE}\n`);
    return 2;
  }
  if (values.help || !command || !(command in needs) || args.length < needs[command]) {
    io.stderr.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const progress = (line: string) => void io.stderr.write(`${line}\n`);
  try {
    const file = values.kubeconfig ?? env.KUBECONFIG?.split(path.delimiter)[0] ?? path.join('.plinth', 'kubeconfig');
    const caller = readCaller(file, values.context);
    switch (command) {
      case 'export':
        await exportSnapshot(caller, { tenant: args[0], at: values.at, recipients: values.recipient ?? [] }, io.stdout, progress);
        break;
      case 'import': {
        const identities = (values.identity ?? []).flatMap((f) => identitiesIn(readFileSync(f, 'utf8')));
        if ((values.identity ?? []).length > 0 && identities.length === 0) throw new Error(`no age identity (AGE-SECRET-KEY-1…) in ${values.identity!.join(', ')}`);
        await importSnapshot(caller, await readAll(io.stdin), { tenant: args[0], shard: values.shard, identities, replace: values.replace }, progress);
        break;
      }
      case 'clone':
        await cloneTenant(caller, args[0], args[1], values.at, values.shard, progress);
        break;
      default:
        await restoreFromHistory(caller, { tenant: args[0], at: values.at!, targets: args.slice(1), namespace: values.namespace }, progress);
    }
    return 0;
  } catch (err) {
    io.stderr.write(`plinth tenant ${command}: ${(err as Error).message}\n`);
    return 1;
  }
}
