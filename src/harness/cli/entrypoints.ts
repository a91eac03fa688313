/**
 * The other long-running entry points as subcommands of `hcs-testbed`:
 * `apiserver` (src/harness/realcluster/apiserver/serve.ts), `crds` (src/product/api/crds/dump.ts),
 * `mock-hcs` (mock-hcs/src/server.ts) and `provider` (src/harness/cli/provider.ts). Bad flags: exit 2 with a message.
 */
import { parseArgs } from 'node:util';
import { errorMessage } from '../../core/errors.js';
import { crdsYaml } from '../../product/api/crds/dump.js';
import { SPEC_RULES, SPEC_RULE_IDS, rulesMarkdown } from '../../core/rules.js';

export const APISERVER_HELP = `hcs-testbed apiserver — a real kube-apiserver + etcd with the testbed's CRDs and admission webhook

Usage:
  hcs-testbed apiserver [--kubeconfig out/real/kubeconfig] [--namespace NS]... [--watch-cache] [--no-webhook]
  hcs-testbed apiserver --attach KUBECONFIG --webhook-host HOST   (serve only the webhook for a cluster elsewhere, e.g. kind)

Needs the binaries built by tools/kube/build.sh (Go; see docs/real-clusters.md).
Options: --webhook-host HOST (default 127.0.0.1), --webhook-port N, --webhook-listen ADDR.
Stop with Ctrl-C (with --attach this removes the webhook configurations).
`;

export const CRDS_HELP = `hcs-testbed crds — print every CRD of the testbed as one YAML stream

Usage:
  hcs-testbed crds > out/crds.yaml && kubectl apply -f out/crds.yaml
`;

const APISERVER_OPTIONS = {
  kubeconfig: { type: 'string' },
  namespace: { type: 'string', multiple: true },
  'watch-cache': { type: 'boolean' },
  webhook: { type: 'boolean' },
  'no-webhook': { type: 'boolean' },
  'webhook-host': { type: 'string' },
  'webhook-port': { type: 'string' },
  'webhook-listen': { type: 'string' },
  attach: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function apiserverMain(argv: string[], write: (s: string) => void): Promise<number> {
  let values;
  try {
    values = parseArgs({ args: argv, options: APISERVER_OPTIONS }).values;
  } catch (e) {
    write(`error: ${errorMessage(e)}\n(see hcs-testbed apiserver --help)\n`);
    return 2;
  }
  if (values.help) {
    write(APISERVER_HELP);
    return 0;
  }
  const port = values['webhook-port'];
  if (port !== undefined && !/^\d+$/.test(port)) {
    write(`error: --webhook-port must be a port number, got "${port}"\n`);
    return 2;
  }
  const { serve } = await import('../realcluster/apiserver/serve.js');
  await serve(argv);
  // serve() has started the processes and exits the process itself on Ctrl-C or a startup failure.
  return new Promise<number>(() => undefined);
}

export function crdsMain(argv: string[], write: (s: string) => void): number {
  if (argv.includes('--help') || argv.includes('-h')) {
    write(CRDS_HELP);
    return 0;
  }
  if (argv.length) {
    write(`error: crds takes no arguments, got "${argv.join(' ')}"\n(see hcs-testbed crds --help)\n`);
    return 2;
  }
  write(crdsYaml());
  return 0;
}

const RULES_HELP = `Usage: hcs-testbed rules [--markdown] [ID...]

The rule catalogue: every rule of the two procedure documents with its ID (NET-1, DISK-3, ...).
  ID...        only these rules (e.g. DISK-3 MD-1)
  --markdown   the whole catalogue as Markdown (docs/rules.md is this output)
`;

export function rulesMain(argv: string[], write: (s: string) => void): number {
  if (argv.includes('--help') || argv.includes('-h')) {
    write(RULES_HELP);
    return 0;
  }
  const markdown = argv.includes('--markdown');
  const ids = argv.filter((a) => a !== '--markdown');
  const bad = ids.filter((a) => a.startsWith('-') || !SPEC_RULE_IDS.has(a.toUpperCase()));
  if (bad.length) {
    write(`error: ${bad.map((b) => (b.startsWith('-') ? `unknown option "${b}"` : `no rule "${b}"`)).join(', ')} (the IDs: hcs-testbed rules)\n`);
    return 2;
  }
  if (markdown) {
    if (ids.length) {
      write('error: --markdown prints the whole catalogue; give no IDs with it\n');
      return 2;
    }
    write(rulesMarkdown());
    return 0;
  }
  const want = new Set(ids.map((i) => i.toUpperCase()));
  for (const r of SPEC_RULES) if (!want.size || want.has(r.id)) write(`${r.id.padEnd(7)} ${r.text}\n`);
  return 0;
}

export async function mockHcsCommand(argv: string[]): Promise<number> {
  const { main } = await import('../../../mock-hcs/src/server.js');
  return main(argv);
}

/** `hcs-testbed <name> ...` for the long-running entry points (src/harness/cli/main.ts dispatches here). */
export const SUBCOMMANDS: Record<string, (argv: string[], write: (s: string) => void) => Promise<number> | number> = {
  serve: async (argv, write) => (await import('./serve.js')).serveMain(argv, write),
  time: async (argv, write) => (await import('./time.js')).timeMain(argv, write),
  status: async (argv, write) => (await import('./status.js')).statusMain(argv, write),
  demo: async (argv, write) => (await import('./demo.js')).demoMain(argv, write),
  catalog: async (argv, write) => (await import('./catalog.js')).catalogMain(argv, write),
  apiserver: apiserverMain,
  crds: crdsMain,
  rules: rulesMain,
  'mock-hcs': (argv) => mockHcsCommand(argv),
  provider: async (argv, write) => (await import('./provider.js')).providerMain(argv, write),
  capture: async (argv, write) => (await import('./capture.js')).captureMain(argv, write),
  doctor: async (argv, write) => (await import('./capture.js')).doctorMain(argv, write),
};
