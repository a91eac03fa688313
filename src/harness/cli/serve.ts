/**
 * `hcs-testbed serve`: a live embedded testbed for the real kubectl and a
 * browser (docs/demo.md, docs/kube.md).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { KubeadmControlPlane, Machine, MachineDeployment } from '../../product/api/capi.js';
import { formatDuration } from '../../core/clock.js';
import { errorMessage } from '../../core/errors.js';
import { testbedExtension } from '../dashboard/extension.js';
import { defaultOsSupportMatrix } from '../../product/matrix/matrix.js';
import { catalogSummary, catalogValues } from './catalog.js';
import { startFacade, type Facade } from '../../world/facade/server.js';
import { checkSpeed, TimeControl } from '../../world/facade/timecontrol.js';
import { applyObject, loadManifestPath } from '../manifests/index.js';
import { createTestbed, type Testbed } from '../testbed/index.js';
import { createReplayTestbed, readBundleFile } from '../capture/replay.js';
import { writeSecretFile } from '../../core/secret-file.js';
import { REPO_ROOT } from '../../core/repo.js';

export const SERVE_HELP = `hcs-testbed serve — a live testbed for the real kubectl and a browser

Usage:
  hcs-testbed serve [--preset NAME | --apply PATH]... [options]

What to bring up (applied, then run in virtual time until every Machine is Running,
at most 2 h of virtual time, before the live clock starts; the flags may be repeated):
  --preset NAME            the library's fixture sets in scenarios/manifests/:
                             worker-cluster  Cluster demo, a worker pool and a MachineDeployment of 3
                             cluster         the same with a KubeadmControlPlane of 3 (the upgrade
                                             document's control-plane steps need it)
  --apply PATH             a manifest file or a directory of them (applied after the presets)
  --from BUNDLE            start from a captured bundle instead (hcs-testbed capture; docs/incident.md):
                           its cloud, management objects, workload clusters and running nodes, at its
                           instant; no bring-up run (the controllers take the state over, then time is yours)
  (none of these: an empty management cluster; create clusters with kubectl apply)

Options:
  --speed X                virtual seconds per wall second once up (default 10; 0 = start paused;
                           the bring-up always runs to completion first)
  --port N                 TCP port (default 6443; 0 = any free port)
  --host ADDR              listen address (default 127.0.0.1, loopback only)
  --kubeconfig-dir DIR     where the kubeconfig files go (default out/kube)
  --seed N                 seed of the simulation (default 42)
  -h, --help               this text

Once up it prints the kubeconfig, its contexts and the dashboard's address. The API is
HTTPS (a fresh CA, in the kubeconfig) and needs the kubeconfig's bearer token or a client
certificate signed by that CA (client-cert.kubeconfig has one): anonymous requests get 401.
Time: hcs-testbed time pause|resume|speed X|advance 5m|next (see hcs-testbed time --help).
Stop with Ctrl-C. Exit codes: 0 stopped, 2 bad flags or input.
`;

export const PRESETS: Record<string, string> = {
  'worker-cluster': 'scenarios/manifests/worker-cluster',
  cluster: 'scenarios/manifests/cluster',
};

export { REPO_ROOT };

export class UsageError extends Error {}

/** Wall ms of controller work between two turns of the event loop once serving (docs/demo.md). */
export const SERVE_YIELD_SLICE_MS = 50;

export interface ServeOptions {
  manifests: string[];
  speed: number;
  port: number;
  host: string;
  kubeconfigDir: string;
  seed: number;
  /** Virtual time at the start (default: the wall time, whole seconds). */
  startMs?: number;
  /** Tick period of the live clock (default 100 ms; tests pass 0 and step by hand). */
  tickMs?: number;
  /** The live clock's wall-time source (tests inject one). */
  wallNow?: () => number;
  /** --from: the bundle (path) the testbed starts from. */
  from?: string;
}

function int(name: string, v: string, min: number, max: number): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got "${v}"`);
  return n;
}

export function parseServeArgs(argv: string[]): ServeOptions | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: false,
      options: {
        preset: { type: 'string', multiple: true },
        apply: { type: 'string', multiple: true },
        speed: { type: 'string', default: '10' },
        port: { type: 'string', default: '6443' },
        host: { type: 'string', default: '127.0.0.1' },
        'kubeconfig-dir': { type: 'string', default: 'out/kube' },
        seed: { type: 'string', default: '42' },
        from: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (e) {
    throw new UsageError(errorMessage(e));
  }
  const o = parsed.values;
  if (o.help) return 'help';
  const manifests: string[] = [];
  for (const p of o.preset ?? []) {
    const dir = PRESETS[p];
    if (!dir) throw new UsageError(`--preset: unknown preset "${p}" (known: ${Object.keys(PRESETS).join(', ')})`);
    manifests.push(join(REPO_ROOT, dir));
  }
  for (const p of o.apply ?? []) {
    const abs = resolve(p);
    if (!existsSync(abs)) throw new UsageError(`--apply: no such file or directory: ${p}`);
    manifests.push(abs);
  }
  if (o.from !== undefined) {
    if (manifests.length) throw new UsageError('--from starts from a captured bundle: no --preset or --apply with it');
    try {
      readBundleFile(o.from);
    } catch (e) {
      throw new UsageError(`--from: ${errorMessage(e)}`);
    }
  }
  const speedText = o.speed ?? '10';
  const speed = Number(speedText);
  try {
    if (speedText.trim() === '') throw new Error('empty');
    checkSpeed(speed);
  } catch {
    throw new UsageError(`--speed must be a number from 0 to 10000 (virtual seconds per wall second), got "${speedText}"`);
  }
  return {
    manifests,
    speed,
    port: int('port', o.port ?? '6443', 0, 65535),
    host: o.host ?? '127.0.0.1',
    kubeconfigDir: resolve(o['kubeconfig-dir'] ?? 'out/kube'),
    seed: int('seed', o.seed ?? '42', 0, 2 ** 31 - 1),
    ...(o.from !== undefined ? { from: resolve(o.from) } : {}),
  };
}

export interface Served {
  tb: Testbed;
  facade: Facade;
  time: TimeControl;
  /** The file (0600) holding the dashboard's login address: the token is not printed (issue 24). */
  dashboardUrlFile: string;
  /** What bring-up did (for the banner). */
  bringUp: { machines: number; running: number; virtualMs: number; wallMs: number; ok: boolean };
  close(): Promise<void>;
}

function allUp(tb: Testbed): { machines: number; running: number; ok: boolean } {
  const mgmt = tb.env.mgmt;
  const machines = mgmt.listSync<Machine>('Machine');
  const running = machines.filter((m) => m.status?.phase === 'Running').length;
  const mds = mgmt.listSync<MachineDeployment>('MachineDeployment');
  const kcps = mgmt.listSync<KubeadmControlPlane>('KubeadmControlPlane');
  const want = mds.reduce((n, md) => n + (md.spec.replicas ?? 1), 0) + kcps.reduce((n, k) => n + (k.spec.replicas ?? 1), 0);
  return { machines: machines.length, running, ok: running === machines.length && machines.length >= want };
}

/** Bring up a testbed and serve it (the CLI's work, without the printing). */
export async function startServe(o: ServeOptions): Promise<Served> {
  const startMs = o.startMs ?? Math.floor(Date.now() / 1000) * 1000;
  const tb = o.from ? await createReplayTestbed(readBundleFile(o.from), { seed: o.seed }) : await createTestbed({ seed: o.seed, startMs });
  let facade: Facade | undefined;
  let time: TimeControl | undefined;
  try {
    const loaded = o.manifests.flatMap((p) => loadManifestPath(p));
    for (const m of loaded) await applyObject(tb.env.mgmt, m.obj, m.obj.metadata.namespace);
    const wall0 = Date.now();
    const v0 = tb.clock.now();
    // From a bundle: the controllers take the captured state over at its instant; no bring-up (the incident's time is the user's).
    const r = o.from ? (await tb.sim.settle(), { ok: allUp(tb).ok }) : await tb.sim.runUntil(() => allUp(tb).ok, 2 * 3_600_000);
    const up = allUp(tb);
    const bringUp = { machines: up.machines, running: up.running, virtualMs: tb.clock.now() - v0, wallMs: Date.now() - wall0, ok: r.ok };
    // From now on HTTP requests share the event loop with the controllers: a drain lets them in every 50 ms (Manager.setYieldSlice).
    tb.env.manager.setYieldSlice(SERVE_YIELD_SLICE_MS);
    time = new TimeControl(tb.sim, { speed: o.speed, paused: o.speed === 0, ...(o.tickMs !== undefined ? { tickMs: o.tickMs } : {}), ...(o.wallNow ? { wallNow: o.wallNow } : {}) });
    facade = await startFacade({ mgmt: tb.env.mgmt, workloads: tb.env.workloads, logs: tb.env.logs, clock: tb.clock, port: o.port, host: o.host, kubeconfigDir: o.kubeconfigDir, extension: testbedExtension({ time, dashboard: { mgmt: tb.env.mgmt, cloud: tb.cloud, events: tb.env.events, logs: tb.env.logs, workloads: tb.env.workloads } }) });
    const f = facade;
    // The login address carries the token: into a 0600 file, not onto stdout (CI logs keep stdout).
    const dashboardUrlFile = join(o.kubeconfigDir, 'dashboard-url');
    writeSecretFile(dashboardUrlFile, `${f.dashboardUrl}\n`);
    // New workload clusters get their contexts.
    tb.env.workloads.onCreate(() => queueMicrotask(() => f.writeKubeconfig()));
    const t = time;
    return {
      tb,
      facade,
      time,
      bringUp,
      dashboardUrlFile,
      close: async () => {
        t.close();
        await t.idle();
        await f.close();
        await tb.close();
      },
    };
  } catch (e) {
    time?.close();
    await facade?.close();
    await tb.close();
    throw e;
  }
}

/** The banner: the kubeconfig, its contexts and which one the documents' workload commands need. */
export function banner(s: Served, o: ServeOptions): string {
  const { facade, bringUp } = s;
  const files = facade.kubeconfigPaths;
  const lines: string[] = [];
  if (o.from) lines.push(`hcs-testbed serve: from the bundle ${o.from} (captured ${new Date(s.tb.clock.now()).toISOString()}), seed ${o.seed}`);
  else lines.push(`hcs-testbed serve: seed ${o.seed}, ${o.manifests.length ? o.manifests.map((m) => m.replace(`${REPO_ROOT}/`, '')).join(', ') : 'no manifests (empty management cluster)'}`);
  if (o.manifests.length) {
    lines.push(`brought up: ${bringUp.running}/${bringUp.machines} machines Running after ${formatDuration(bringUp.virtualMs)} of virtual time (${(bringUp.wallMs / 1000).toFixed(1)} s wall)${bringUp.ok ? '' : ' — NOT all up within 2h of virtual time; see kubectl get machines -A'}`);
  }
  lines.push(`API:       ${facade.url}   (TLS, a bearer token; both in the kubeconfig; each workload cluster has its own address, in its context)`);
  lines.push(`dashboard: ${facade.url}/   (log in once with the address in ${s.dashboardUrlFile}, readable by you only:`);
  lines.push(`           xdg-open "$(cat ${s.dashboardUrlFile})"; the browser then keeps the token in a cookie)`);
  lines.push(...catalogSummary(catalogValues(s.tb.cloud.catalog(), defaultOsSupportMatrix().rows)));
  lines.push('');
  lines.push(`export KUBECONFIG=${files.combined}`);
  if (files.clientCert) lines.push(`(or KUBECONFIG=${files.clientCert}: the same contexts, logged in by a client certificate: kubernetes-admin, O=kubeadm:cluster-admins)`);
  lines.push('contexts:');
  lines.push('  management (current)   the management cluster: Cluster API and HCS objects (kubectl get machines -n cpaas-system)');
  const workloads = Object.entries(files.workloads);
  for (const [key, file] of workloads) {
    const name = key.split('/')[1]!;
    lines.push(`  ${name.padEnd(22)} the workload cluster ${key}: kubectl --context ${name} get nodes   (or KUBECONFIG=${file})`);
  }
  if (workloads.length) {
    const first = workloads[0]![0].split('/')[1]!;
    lines.push(`The documents' workload-cluster commands (kubectl get nodes, the Kube-OVN AppRelease steps) need --context ${first};`);
    lines.push(`typed on the management context they answer for the management cluster instead (kubectl get nodes lists its own node).`);
  } else lines.push('No workload cluster yet: each gets a context (its name) in the same file once its control plane is up.');
  lines.push('');
  lines.push(`time: ${s.time.running ? `running, ${o.speed} virtual s per wall s` : 'paused (--speed 0)'}, now ${new Date(s.tb.clock.now()).toISOString()}`);
  lines.push(`      hcs-testbed time pause|resume|speed X|advance 5m|next --kubeconfig ${files.combined}`);
  lines.push(`status: hcs-testbed status --kubeconfig ${files.combined}   (every hostname now, and why anything is waiting)`);
  lines.push('Ctrl-C stops.');
  return lines.join('\n') + '\n';
}

export async function serveMain(argv: string[], write: (s: string) => void): Promise<number> {
  let o: ServeOptions | 'help';
  try {
    o = parseServeArgs(argv);
  } catch (e) {
    write(`error: ${errorMessage(e)}\n(see hcs-testbed serve --help)\n`);
    return 2;
  }
  if (o === 'help') {
    write(SERVE_HELP);
    return 0;
  }
  let s: Served;
  try {
    s = await startServe(o);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') write(`error: --port ${o.port}: the address is in use (pick another, or --port 0 for any free port)\n`);
    else if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') write(`error: --host ${o.host}: cannot listen there (${errorMessage(e)})\n`);
    else write(`error: ${errorMessage(e)}\n`);
    return 2;
  }
  write(banner(s, o));
  return stopOnSignal(s);
}

/**
 * Most wall ms a stop waits for the orderly close (the time step under way, the facade, the
 * testbed) before it exits anyway: SIGTERM/SIGINT stop serve within this in any state, a
 * MachineSet's backlog of Machines included (issue 32). A second signal exits at once.
 */
export const SHUTDOWN_GRACE_MS = 3_000;

/** Resolves with serve's exit code (0) on the first SIGINT or SIGTERM, once closed or after SHUTDOWN_GRACE_MS. */
export function stopOnSignal(s: Pick<Served, 'close'>, graceMs = SHUTDOWN_GRACE_MS): Promise<number> {
  return new Promise<number>((resolveExit) => {
    let stopping = false;
    const stop = (): void => {
      if (stopping) return resolveExit(0);
      stopping = true;
      const deadline = setTimeout(() => resolveExit(0), graceMs);
      void s.close().then(
        () => resolveExit(0),
        () => resolveExit(0),
      ).finally(() => clearTimeout(deadline));
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
