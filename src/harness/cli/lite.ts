/**
 * The CLI's commands that are one HTTP call to a running `hcs-testbed serve`
 * (`time`, `status`), as a bundle of their own (`lite`, src/harness/cli/cli-bundle.ts):
 * bin/hcs-testbed.mjs runs them from it before it loads the full CLI bundle,
 * whose start (the testbed, the Kubernetes client, fastify: ~1,600 inputs)
 * cost 2–3.5 s a call during a live demo (issue 25). This bundle holds the two
 * commands, the kubeconfig reader and the YAML parser only.
 */
import { statusMain } from './status.js';
import { timeMain } from './time.js';

export const LITE_COMMANDS = ['time', 'status'] as const;

export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  const write = (s: string): void => void process.stdout.write(s);
  if (cmd === 'time') return timeMain(rest, write);
  if (cmd === 'status') return statusMain(rest, write);
  process.stderr.write(`hcs-testbed: "${cmd ?? ''}" is not a command of the lite entry (${LITE_COMMANDS.join(', ')})\n`);
  return 2;
}
