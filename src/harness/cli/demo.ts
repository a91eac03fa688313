/**
 * `hcs-testbed demo worker-nodes | cluster-upgrade`: a document as a guided
 * demo against a running `hcs-testbed serve` (src/harness/demo/).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { errorMessage } from '../../core/errors.js';
import { clusterUpgradeSteps, workerNodeSteps, type DemoValues } from '../demo/documents.js';
import { getJson, kubeconfigWithContext, runSteps, type DemoCtx, type DemoIo, type StepResult } from '../demo/run.js';
import { withTempDir } from '../demo/temp-dir.js';
import { defaultOsSupportMatrix } from '../../product/matrix/matrix.js';
import { resolveTarget } from '../dashboard/time-client.js';

export const DEMO_HELP = `hcs-testbed demo — a procedure document as a guided demo against hcs-testbed serve

Usage:
  hcs-testbed demo worker-nodes     [--auto] [--pace X] [--kubeconfig FILE]   (serve --preset worker-cluster or cluster)
  hcs-testbed demo cluster-upgrade  [--auto] [--pace X] [--kubeconfig FILE]   (serve --preset cluster)

Each step prints the document's command with its <placeholders> filled in (from the
served testbed and hcs-testbed catalog), waits for Enter, runs it with the real kubectl,
and says what the output shows (computed from it and the live state). The edits the
document asks for in words (a pool entry appended, a template copied and changed, the
KubeadmControlPlane edit) are done for you and printed. Virtual time is paused between
steps; after an action the live clock runs at the pace until the step is done, so the
page shows Provisioning → Running → Deleting as it happens and -w output streams; the
Kube-OVN phases are shown one at a time. A wait that stops making progress is cut
short with the reasons ("why is it waiting?").
The commands run in a private temporary directory (it holds a kubeconfig with
serve's token), removed when the demo ends, also on Ctrl-C or SIGTERM.

Options:
  --auto              run every step without waiting for Enter
  --pace X            virtual seconds per wall second while a step waits (default 30, about
                      one worker replacement every 8 s; with --auto default 0: as fast as it goes)
  --kubeconfig FILE   the kubeconfig serve printed (default $KUBECONFIG)
  --cluster NAME      the Cluster (default demo)
  --flavor NAME       the flavor of the infrastructure updates (default s6.xlarge.2)
  --kubectl PATH      default /usr/bin/kubectl
  -h, --help          this text

Exit codes: 0 every command succeeded, 1 a command failed or the server is unreachable, 2 bad usage.
`;

export const DEMOS = { 'worker-nodes': workerNodeSteps, 'cluster-upgrade': clusterUpgradeSteps } as const;

export interface DemoOptions {
  doc: keyof typeof DEMOS;
  kubeconfig: string;
  cluster?: string;
  flavor?: string;
  kubectl?: string;
  io: DemoIo;
  afterStep?: DemoCtx['afterStep'];
  /** Virtual s per wall s while a step waits (0 or none: advance in steps). */
  pace?: number;
}

/** Run one document's demo; the results of its steps. Its working directory is removed at the end (temp-dir.ts). */
export function runDemo(o: DemoOptions): Promise<StepResult[]> {
  return withTempDir('hcs-demo-', (dir) => runDemoIn(o, dir));
}

async function runDemoIn(o: DemoOptions, dir: string): Promise<StepResult[]> {
  const cluster = o.cluster ?? 'demo';
  const ctx: DemoCtx = {
    io: o.io,
    target: resolveTarget({ kubeconfig: o.kubeconfig }),
    kubectl: o.kubectl ?? '/usr/bin/kubectl',
    kubeconfig: o.kubeconfig,
    workloadKubeconfig: kubeconfigWithContext(o.kubeconfig, cluster, join(dir, 'workload.kubeconfig')),
    dir,
    ...(o.afterStep ? { afterStep: o.afterStep } : {}),
    ...(o.pace ? { pace: o.pace } : {}),
    workloadContext: cluster,
  };
  // The matrix rows (UPG-4): where the document's subject is now (the workers, or the control plane), and the next row.
  const what = o.doc === 'worker-nodes' ? `MachineDeployment ${cluster}-md-0` : `KubeadmControlPlane ${cluster}-control-plane`;
  const version =
    o.doc === 'worker-nodes'
      ? (await getJson<{ spec: { template: { spec: { version?: string } } } }>(ctx, `/apis/cluster.x-k8s.io/v1beta1/namespaces/cpaas-system/machinedeployments/${cluster}-md-0`)).spec.template.spec.version
      : (await getJson<{ spec: { version?: string } }>(ctx, `/apis/controlplane.cluster.x-k8s.io/v1beta1/namespaces/cpaas-system/kubeadmcontrolplanes/${cluster}-control-plane`)).spec.version;
  const rows = defaultOsSupportMatrix().rows;
  const at = rows.findIndex((r) => r.kubernetesVersion === version);
  if (at < 0 || at + 1 >= rows.length) throw new Error(`${what} is at ${version ?? '(no version)'}: no next OS Support Matrix row to upgrade to (hcs-testbed catalog)`);
  const values: DemoValues = { cluster, flavor: o.flavor ?? 's6.xlarge.2', from: rows[at]!, to: rows[at + 1]! };
  const title = o.doc === 'worker-nodes' ? 'Worker nodes on Huawei Cloud Stack (seeds/000), guided' : 'Upgrading a cluster on Huawei Cloud Stack (seeds/004), guided';
  return runSteps(ctx, DEMOS[o.doc](values), `${title}: ${values.from.kubernetesVersion} → ${values.to.kubernetesVersion}, cluster ${cluster}, commands run in ${dir}`);
}

export async function demoMain(argv: string[], write: (s: string) => void): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { auto: { type: 'boolean', default: false }, pace: { type: 'string' }, kubeconfig: { type: 'string' }, cluster: { type: 'string' }, flavor: { type: 'string' }, kubectl: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } } });
  } catch (e) {
    write(`error: ${errorMessage(e)}\n(see hcs-testbed demo --help)\n`);
    return 2;
  }
  const v = parsed.values;
  if (v.help) {
    write(DEMO_HELP);
    return 0;
  }
  const [doc, ...extra] = parsed.positionals;
  if (!doc || !(doc in DEMOS) || extra.length) {
    write(`error: give one document: ${Object.keys(DEMOS).join(' or ')}${doc && !(doc in DEMOS) ? ` (got "${doc}")` : ''}\n(see hcs-testbed demo --help)\n`);
    return 2;
  }
  const kubeconfig = v.kubeconfig ?? process.env.KUBECONFIG?.split(':')[0];
  if (!kubeconfig || !existsSync(kubeconfig)) {
    write(`error: --kubeconfig: give the kubeconfig hcs-testbed serve printed${kubeconfig ? ` (no file ${kubeconfig})` : ''}\n`);
    return 2;
  }
  const kubectl = v.kubectl ?? '/usr/bin/kubectl';
  if (!existsSync(kubectl)) {
    write(`error: --kubectl: no kubectl at ${kubectl}\n`);
    return 2;
  }
  const pace = v.pace === undefined ? (v.auto ? 0 : 30) : Number(v.pace);
  if (v.pace !== undefined && (v.pace.trim() === '' || !Number.isFinite(pace) || pace < 0 || pace > 10_000)) {
    write(`error: --pace must be a number from 0 to 10000 (virtual seconds per wall second), got "${v.pace}"\n`);
    return 2;
  }
  const rl = v.auto ? undefined : createInterface({ input: process.stdin, output: process.stdout });
  // Ctrl-C at a prompt reaches readline, not the process: make it the signal it is, so the demo ends and cleans up.
  rl?.on('SIGINT', () => process.kill(process.pid, 'SIGINT'));
  const io: DemoIo = { write, ...(rl ? { ask: (prompt: string) => new Promise<void>((r) => rl.question(`${prompt} `, () => r())) } : {}) };
  try {
    const results = await runDemo({ doc: doc as keyof typeof DEMOS, kubeconfig, kubectl, io, pace, ...(v.cluster ? { cluster: v.cluster } : {}), ...(v.flavor ? { flavor: v.flavor } : {}) });
    const failed = results.filter((r) => r.code !== 0);
    const stalled = results.filter((r) => r.waited === 'stalled');
    write(`${results.length} steps, ${failed.length ? `${failed.length} command(s) failed: ${failed.map((f) => f.id).join(', ')}` : 'every command succeeded'}${stalled.length ? `; stalled: ${stalled.map((r) => r.id).join(', ')} (see the reasons above)` : ''}\n`);
    // The document's end state, said as it is: done, or what is left and why.
    write(`${stalled.length ? `Not done: ${stalled.map((r) => `${r.id}: ${r.look}`).join('; ')}` : 'Done: what the document checks holds.'}\n`);
    return failed.length ? 1 : 0;
  } catch (e) {
    write(`error: ${errorMessage(e)}\n`);
    return 1;
  } finally {
    rl?.close();
  }
}
