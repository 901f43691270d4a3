import { runKubeconfigCli } from './kubeconfig.cli.js';

// `npm run kubeconfig -- …`: a kubeconfig for a user of a tenant (see kubeconfig.cli.ts).
process.exitCode = await runKubeconfigCli(process.argv.slice(2));
