import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { readCaller } from './caller-kubeconfig.js';
import { issueUserKubeconfig } from './issue-user-kubeconfig.js';

const USAGE = `usage: npm run kubeconfig -- --tenant <tenant> --user <name> [--group <group>]... [--expiration-seconds <n>]
         [--kubeconfig <file>] [--context <name>] [--out <file>] [--wait-seconds <n>]

Creates a key and a CertificateSigningRequest for <name> in <tenant> with your
kubeconfig (default: $KUBECONFIG, else ./.plinth/kubeconfig), approves it if
you may, waits for the certificate and writes a kubeconfig for the tenant
(default: ./<name>@<tenant>.kubeconfig, readable by you only).`;

/** Runs the CLI with `argv`; resolves with the exit code (0 done, 1 failed, 2 usage). */
export async function runKubeconfigCli(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let values;
  try {
    values = parseArgs({
      args: argv,
      options: {
        tenant: { type: 'string' },
        user: { type: 'string' },
        group: { type: 'string', multiple: true },
        'expiration-seconds': { type: 'string' },
        kubeconfig: { type: 'string' },
        context: { type: 'string' },
        out: { type: 'string' },
        'wait-seconds': { type: 'string' },
        help: { type: 'boolean' },
      },
    }).values;
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help || !values.tenant || !values.user) {
    process.stderr.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const expiration = values['expiration-seconds'] === undefined ? undefined : Number(values['expiration-seconds']);
  if (expiration !== undefined && !(Number.isInteger(expiration) && expiration >= 600)) {
    process.stderr.write('--expiration-seconds must be an integer of at least 600\n');
    return 2;
  }
  const file = values.kubeconfig ?? env.KUBECONFIG?.split(path.delimiter)[0] ?? path.join('.plinth', 'kubeconfig');
  const out = values.out ?? `${values.user}@${values.tenant}.kubeconfig`;
  try {
    const issued = await issueUserKubeconfig({
      caller: readCaller(file, values.context),
      tenant: values.tenant,
      user: values.user,
      groups: values.group ?? [],
      expirationSeconds: expiration,
      waitMs: Number(values['wait-seconds'] ?? 300) * 1000,
      log: (line) => process.stderr.write(`${line}\n`),
    });
    writeFileSync(out, issued.kubeconfig, { mode: 0o600 });
    process.stderr.write(`wrote ${out}: kubectl --kubeconfig ${out} auth whoami\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`plinth kubeconfig: ${(err as Error).message}\n`);
    return 1;
  }
}
