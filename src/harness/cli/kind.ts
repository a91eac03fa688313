/**
 * `hcs-testbed kind up|down [--name N]`: a real management cluster in kind
 * (Kubernetes in Docker) with the testbed's CRDs, where a Docker engine runs
 * (a developer laptop, GitHub Actions' ubuntu runners, or a machine without a
 * registry with tools/docker/start.sh and tools/kind/build.sh). Wraps the
 * `kind` and `kubectl` CLIs; without a usable Docker engine or without `kind`
 * it exits 3 saying so, and a failed step exits 1 naming the step.
 *
 * The node image: --image, else $HCS_TESTBED_KIND_IMAGE, else the image
 * tools/kind/build.sh built (hcs-testbed/kind-node:<KUBE_VERSION>) when Docker
 * has it, else kind's default (kindest/node, pulled from its registry).
 * kind and kubectl: $KIND/$KUBECTL, else on PATH, else tools/kind's cache.
 */
import { accessSync, constants, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { crdsYaml } from '../../product/api/crds/dump.js';
import { kindBinDir, kindNodeImage } from '../realcluster/kind/kind-binaries.js';
import { testbedCrdsForUpstream } from '../realcluster/upstream/upstream.js';
import { spawnRunner, type Runner } from '../realcluster/kind/runner.js';
import { installInCluster, MANAGERS_MODES, type ManagersMode } from '../realcluster/kind/install.js';

export { spawnRunner, type RunResult, type Runner } from '../realcluster/kind/runner.js';

export const KIND_HELP = `Usage:
  hcs-testbed kind up [--name N] [--kubeconfig FILE] [--image IMAGE] [--namespace NS]... [--load IMAGE]...
                     [--managers none|in-cluster] [--speed X]
  hcs-testbed kind down [--name N]

up    create the kind cluster N (default hcs-testbed) unless it exists, install
      the testbed's CRDs (kubectl apply --server-side), create the namespaces
      (default cpaas-system), load the local Docker images given with --load
      into the node (kind load docker-image) and write the kubeconfig
      (default out/kind/kubeconfig)
down  delete the kind cluster N

--managers in-cluster: also run the upstream Cluster API managers (core, kubeadm
      bootstrap, kubeadm control plane; tools/capi) and the HCS provider as
      Deployments, laid out as clusterctl init does (upstream's config/default
      kustomizations; certificates generated in cert-manager's place): images
      built by tools/kind/images.sh and loaded into the node; the provider
      (deployment/hcs-controller-manager in cpaas-system) reaches the HCS
      endpoint that \`hcs-testbed run --provider in-cluster\` serves on this
      machine's address on the kind network. --speed X: the provider's
      --speed (match the run's; default 1, a real deployment).

Node image: --image, else $HCS_TESTBED_KIND_IMAGE, else the one
tools/kind/build.sh built (hcs-testbed/kind-node:<version>) if Docker has it,
else kind's default (kindest/node, from its registry).
Needs the kind and kubectl CLIs ($KIND, $KUBECTL override; else PATH, else
tools/kind/build.sh's cache) and a running Docker engine (\`docker info\`;
tools/docker/start.sh starts one). Exit codes: 0 ok, 1 a step failed (named
in the message), 2 bad usage, 3 kind/kubectl/Docker not available.
`;

const firstLines = (s: string, n = 3): string => s.trim().split('\n').slice(0, n).join('\n');

function executable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The CLI to run: $ENV_VAR if set; else NAME when `NAME ...probe` starts (on
 * PATH); else tools/kind/build.sh's copy when it is there; else NAME (whose
 * failure kindUnavailable then reports).
 */
export function resolveTool(name: 'kind' | 'kubectl', run: Runner = spawnRunner, env: NodeJS.ProcessEnv = process.env): string {
  const set = name === 'kind' ? env.KIND : env.KUBECTL;
  if (set) return set;
  const probe = run(name, name === 'kind' ? ['version'] : ['version', '--client']);
  if (!probe.error) return name;
  const cached = join(kindBinDir(env), name);
  return executable(cached) ? cached : name;
}

/** The node image `kind up` uses when --image is not given (undefined: kind's default). */
export function defaultNodeImage(run: Runner = spawnRunner, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.HCS_TESTBED_KIND_IMAGE) return env.HCS_TESTBED_KIND_IMAGE;
  const image = kindNodeImage();
  const r = run('docker', ['image', 'inspect', '--format', '{{.Id}}', image], { timeoutMs: 30_000 });
  return r.status === 0 && !r.error ? image : undefined;
}

/** Why kind cannot run here, or undefined when kind, kubectl and Docker are usable. */
export function kindUnavailable(run: Runner = spawnRunner, env: NodeJS.ProcessEnv = process.env, needKubectl = true): string | undefined {
  const kind = resolveTool('kind', run, env);
  const kv = run(kind, ['version']);
  if (kv.error || kv.status !== 0) return `the kind CLI is not available (\`${kind} version\`: ${kv.error ?? firstLines(kv.stderr || kv.stdout)}); install it from https://kind.sigs.k8s.io/, build it with tools/kind/build.sh, or set $KIND`;
  if (needKubectl) {
    const kubectl = resolveTool('kubectl', run, env);
    const k = run(kubectl, ['version', '--client']);
    if (k.error || k.status !== 0) return `kubectl is not available (\`${kubectl} version --client\`: ${k.error ?? firstLines(k.stderr || k.stdout)}); set $KUBECTL`;
  }
  const d = run('docker', ['info', '--format', '{{.ServerVersion}}'], { timeoutMs: 30_000 });
  if (d.error || d.status !== 0) {
    return `no usable Docker engine (\`docker info\` failed: ${d.error ?? firstLines(d.stderr || d.stdout)}); kind runs Kubernetes nodes as Docker containers. Start one with tools/docker/start.sh (root; installs docker.io where missing), or without Docker use the real kube-apiserver: tools/kube/build.sh && npx tsx src/harness/realcluster/apiserver/serve.ts`;
  }
  return undefined;
}

export async function kindMain(argv: string[], write: (s: string) => void = (s) => process.stdout.write(s), run: Runner = spawnRunner, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [sub, ...rest] = argv;
  let values;
  try {
    values = parseArgs({
      args: rest,
      options: {
        name: { type: 'string', default: 'hcs-testbed' },
        kubeconfig: { type: 'string', default: 'out/kind/kubeconfig' },
        image: { type: 'string' },
        namespace: { type: 'string', multiple: true, default: ['cpaas-system'] },
        load: { type: 'string', multiple: true, default: [] },
        managers: { type: 'string', default: 'none' },
        speed: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values;
  } catch (e) {
    write(`error: ${(e as Error).message}\n\n${KIND_HELP}`);
    return 2;
  }
  if (!sub || sub === 'help' || sub === '--help' || sub === '-h' || values.help) {
    write(KIND_HELP);
    return sub ? 0 : 2;
  }
  if (sub !== 'up' && sub !== 'down') {
    write(`error: unknown kind command "${sub}"\n\n${KIND_HELP}`);
    return 2;
  }
  if (!(MANAGERS_MODES as readonly string[]).includes(values.managers)) {
    write(`error: --managers: unknown mode "${values.managers}" (known: ${MANAGERS_MODES.join(', ')})\n`);
    return 2;
  }
  const managers = values.managers as ManagersMode;
  const speed = values.speed === undefined ? undefined : Number(values.speed);
  if (speed !== undefined && (!Number.isFinite(speed) || speed <= 0 || speed > 10_000)) {
    write(`error: --speed must be a number above 0 and at most 10000, got "${values.speed}"\n`);
    return 2;
  }
  if (speed !== undefined && managers !== 'in-cluster') {
    write('error: --speed goes with --managers in-cluster (it is the in-cluster provider\'s --speed)\n');
    return 2;
  }
  const why = kindUnavailable(run, env, sub === 'up');
  if (why) {
    write(`error: hcs-testbed kind ${sub}: ${why}\n`);
    return 3;
  }
  const kind = resolveTool('kind', run, env);
  const kubectl = resolveTool('kubectl', run, env);
  const name = values.name;
  const step = (what: string, cmd: string, args: string[]): boolean => {
    write(`${what}: ${cmd} ${args.join(' ')}\n`);
    const r = run(cmd, args);
    if (r.status !== 0 || r.error) {
      write(`error: ${what} failed (exit ${r.status ?? r.error}):\n${(r.stderr || r.stdout).trim()}\n`);
      return false;
    }
    return true;
  };

  if (sub === 'down') return step('delete cluster', kind, ['delete', 'cluster', '--name', name]) ? 0 : 1;

  const kubeconfig = resolve(values.kubeconfig);
  mkdirSync(dirname(kubeconfig), { recursive: true });
  const clusters = run(kind, ['get', 'clusters']);
  const exists = clusters.status === 0 && clusters.stdout.split('\n').map((s) => s.trim()).includes(name);
  if (exists) {
    write(`cluster ${name} exists; reusing it\n`);
    if (!step('write kubeconfig', kind, ['export', 'kubeconfig', '--name', name, '--kubeconfig', kubeconfig])) return 1;
  } else {
    const image = values.image ?? defaultNodeImage(run, env);
    write(`node image: ${image ?? "kind's default (kindest/node)"}\n`);
    if (!step('create cluster', kind, ['create', 'cluster', '--name', name, '--kubeconfig', kubeconfig, '--wait', '120s', ...(image ? ['--image', image] : [])])) return 1;
  }
  const tmp = mkdtempSync(join(tmpdir(), 'hcs-testbed-kind-'));
  try {
    const crds = join(tmp, 'crds.yaml');
    // In-cluster managers: upstream's Cluster API CRDs come with their manifests; the testbed's stay beside them
    // (HCS infrastructure kinds with the v1beta1 contract label, AppRelease), as with --capi upstream.
    writeFileSync(crds, managers === 'in-cluster' ? testbedCrdsForUpstream().map((c) => stringify(c, { lineWidth: 0 })).join('---\n') : crdsYaml());
    // Server-side apply: no last-applied annotation (large CRDs exceed its 256 KiB limit client-side).
    if (!step('install CRDs', kubectl, ['--kubeconfig', kubeconfig, 'apply', '--server-side', '--force-conflicts', '-f', crds])) return 1;
    if (!step('wait for CRDs', kubectl, ['--kubeconfig', kubeconfig, 'wait', '--for=condition=Established', 'crd', '-l', 'hcs-testbed.io/generated=true', '--timeout=120s'])) return 1;
    for (const ns of values.namespace) {
      const r = run(kubectl, ['--kubeconfig', kubeconfig, 'create', 'namespace', ns]);
      if (r.status !== 0 && !/AlreadyExists/.test(r.stderr)) {
        write(`error: create namespace ${ns} failed:\n${r.stderr.trim()}\n`);
        return 1;
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  for (const image of values.load) {
    if (!step(`load image ${image}`, kind, ['load', 'docker-image', '--name', name, image])) return 1;
  }
  if (managers === 'in-cluster') {
    const rc = await installInCluster({ kind, kubectl, name, kubeconfig, ...(speed !== undefined ? { speed } : {}) }, write, run, env);
    if (rc !== 0) return rc;
  }
  write(`kind cluster ${name} is ready with the hcs-testbed CRDs${managers === 'in-cluster' ? ', the Cluster API managers and the HCS provider' : ''}\nexport KUBECONFIG=${kubeconfig}\n`);
  return 0;
}
