import { runTenantCli } from './tenant.cli.js';

// `npm run tenant -- export|import|clone|restore …`: tenant snapshots (see tenant.cli.ts, docs/snapshots.md).
process.exitCode = await runTenantCli(process.argv.slice(2));
