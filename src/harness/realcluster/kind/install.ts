/**
 * `hcs-testbed kind up --managers in-cluster`: the upstream Cluster API
 * managers and the HCS provider as Deployments in the kind cluster, the way
 * `clusterctl init` and a provider's release manifests put them there
 * (src/harness/realcluster/kind/capi-incluster.ts, src/harness/realcluster/kind/provider-incluster.ts).
 *
 * Steps (each named in its error): build the images (tools/kind/images.sh:
 * the managers from tools/capi's static binaries, the provider from the
 * Dockerfile on the local base image; cached), load them into the node
 * (`kind load docker-image`), find this machine's address on the kind
 * network (the gateway of Docker's `kind` network) and a free port there for
 * the HCS endpoint the run serves, render and apply the manifests
 * (server-side apply), wait until every Deployment is Available.
 */
import { createServer } from 'node:net';
import { createHash, randomInt } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { SeededRng } from '../../../core/rng.js';
import { generateCA, issueCertificate } from '../../../core/pki/index.js';
import { repoRootDir, toolVersion } from '../apiserver/binaries.js';
import { findCapiBinaries } from '../upstream/capi-binaries.js';
import { IN_CLUSTER_MANAGERS, renderManager, type Manifest, type RenderedManager } from './capi-incluster.js';
import { PROVIDER_DEPLOYMENT_NAME, PROVIDER_NAMESPACE, providerManifests } from './provider-incluster.js';
import { defaultProject, ephemeralPortRange } from '../external.js';
import type { Runner } from './runner.js';

export const MANAGERS_MODES = ['none', 'in-cluster'] as const;
export type ManagersMode = (typeof MANAGERS_MODES)[number];

/** The gateway of Docker's `kind` network: this machine as the kind node and its pods see it. */
export function kindGateway(run: Runner): string | { error: string } {
  const r = run('docker', ['network', 'inspect', 'kind', '-f', '{{range .IPAM.Config}}{{.Gateway}} {{end}}'], { timeoutMs: 30_000 });
  const gw = r.stdout.split(/\s+/).find((s) => /^\d+\.\d+\.\d+\.\d+$/.test(s));
  if (r.status !== 0 || r.error || !gw) return { error: `docker network inspect kind: ${r.error ?? (r.stderr.trim() || 'no IPv4 gateway')}` };
  return gw;
}

/** A port free on `host` now, below the ephemeral range (the run's own listeners take port 0, inside it). */
export async function freePortOn(host: string, salt = process.pid): Promise<number> {
  const [lo] = ephemeralPortRange();
  const base = Math.max(1024, Math.min(20000, lo - 8192));
  const span = Math.max(1, lo - 4096 - base);
  for (let i = 0; i < Math.min(span, 256); i++) {
    const port = base + ((salt * 13 + i) % span);
    const ok = await new Promise<boolean>((res) => {
      const s = createServer();
      s.once('error', () => res(false));
      s.listen(port, host, () => s.close(() => res(true)));
    });
    if (ok) return port;
  }
  throw new Error(`no free port on ${host} below the ephemeral range`);
}

export interface InClusterOptions {
  kind: string;
  kubectl: string;
  name: string;
  kubeconfig: string;
  /** Provider --speed (testbed runs: requeue delays shortened; 1 = a real deployment). */
  speed?: number;
  /** Wall time to wait for the Deployments (default 300 s). */
  waitSeconds?: number;
}

/** Returns 0, or 1 after writing `error: <step> failed …`. */
export async function installInCluster(o: InClusterOptions, write: (s: string) => void, run: Runner, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const fail = (step: string, detail: string): number => {
    write(`error: ${step} failed: ${detail.trim()}\n`);
    return 1;
  };
  const capi = findCapiBinaries(env);
  if ('missing' in capi) return fail('find the Cluster API managers', `${capi.missing} (build them with tools/capi/build.sh)`);
  const script = join(repoRootDir(), 'tools', 'kind', 'images.sh');
  write(`build images: ${script}\n`);
  const built = run('bash', [script], { timeoutMs: 1_200_000 });
  if (built.status !== 0 || built.error) return fail(`build images (exit ${built.status ?? built.error})`, built.stderr.split('\n').slice(-12).join('\n'));
  const images = built.stdout.split('\n').map((s) => s.trim()).filter(Boolean);
  const providerImage = images.find((i) => i.startsWith('hcs-testbed/provider:'));
  if (images.length < 4 || !providerImage) return fail('build images', `expected three manager images and the provider's on stdout, got: ${images.join(', ') || '(nothing)'}`);
  write(`load images: ${o.kind} load docker-image --name ${o.name} ${images.join(' ')}\n`);
  const loaded = run(o.kind, ['load', 'docker-image', '--name', o.name, ...images], { timeoutMs: 900_000 });
  if (loaded.status !== 0 || loaded.error) return fail(`load images (exit ${loaded.status ?? loaded.error})`, loaded.stderr || loaded.stdout);

  const gw = kindGateway(run);
  if (typeof gw !== 'string') return fail('find the kind network gateway', gw.error);
  let port: number;
  try {
    port = await freePortOn(gw);
  } catch (e) {
    return fail('pick the HCS endpoint port', `${(e as Error).message} (is ${gw} an address of this machine? the kind network must be a local Docker bridge)`);
  }
  const cloudUrl = `https://${gw}:${port}`;
  const now = Date.now();
  const rng = new SeededRng(randomInt(2 ** 31));
  const version = toolVersion('capi', 'CAPI_VERSION');
  const rendered: RenderedManager[] = [];
  try {
    for (const m of IN_CLUSTER_MANAGERS) {
      const file = join(capi.dir, 'config', `${m}.yaml`);
      rendered.push(await renderManager(m, readFileSync(file, 'utf8'), { version, rng, nowMs: now }));
    }
  } catch (e) {
    return fail('render the Cluster API manifests', `${(e as Error).message} (tools/kind/images.sh renders ${join(capi.dir, 'config')})`);
  }
  const cloudCa = await generateCA(rng, now, 'hcs-testbed-cloud-ca');
  const cloudServing = await issueCertificate(cloudCa, { commonName: 'hcs-testbed-cloud', ips: [gw], days: 365 }, rng, now);
  const provider = providerManifests({ image: providerImage, cloudUrl, cloudCa, cloudServing, project: defaultProject(), ...(o.speed ? { speed: o.speed } : {}) });
  const objects: Manifest[] = [...rendered.flatMap((r) => r.objects), ...provider];
  stampConfigHashes(objects);
  const tmp = mkdtempSync(join(tmpdir(), 'hcs-testbed-kind-managers-'));
  try {
    const file = join(tmp, 'managers.yaml');
    writeFileSync(file, objects.map((x) => stringify(x, { lineWidth: 0 })).join('---\n'), { mode: 0o600 });
    write(`apply manifests: ${objects.length} objects (${rendered.map((r) => `${r.namespace}/${r.deployment}`).join(', ')}, ${PROVIDER_NAMESPACE}/${PROVIDER_DEPLOYMENT_NAME}); HCS endpoint ${cloudUrl}\n`);
    const applied = run(o.kubectl, ['--kubeconfig', o.kubeconfig, 'apply', '--server-side', '--force-conflicts', '-f', file], { timeoutMs: 300_000 });
    if (applied.status !== 0 || applied.error) return fail(`apply manifests (exit ${applied.status ?? applied.error})`, applied.stderr || applied.stdout);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const wait = `${o.waitSeconds ?? 300}s`;
  for (const [ns, deployment] of [...rendered.map((r) => [r.namespace, r.deployment] as const), [PROVIDER_NAMESPACE, PROVIDER_DEPLOYMENT_NAME] as const]) {
    // rollout status, not wait --for=Available: after a re-install the old pod is still Available while the new one starts.
    write(`wait for deployment: ${o.kubectl} -n ${ns} rollout status deployment/${deployment} --timeout=${wait}\n`);
    const r = run(o.kubectl, ['--kubeconfig', o.kubeconfig, '-n', ns, 'rollout', 'status', `deployment/${deployment}`, `--timeout=${wait}`], { timeoutMs: ((o.waitSeconds ?? 300) + 30) * 1000 });
    if (r.status !== 0 || r.error) {
      const pods = run(o.kubectl, ['--kubeconfig', o.kubeconfig, '-n', ns, 'get', 'pods', '-o', 'wide']);
      const logs = run(o.kubectl, ['--kubeconfig', o.kubeconfig, '-n', ns, 'logs', '--all-containers', '--tail=15', '-l', 'control-plane=controller-manager']);
      return fail(`wait for deployment ${ns}/${deployment} (exit ${r.status ?? r.error})`, `${r.stderr || r.stdout}\n${pods.stdout}${logs.stdout}`);
    }
  }
  write(`in-cluster: Cluster API ${version} managers and ${PROVIDER_DEPLOYMENT_NAME} Available; the provider expects the HCS endpoint at ${cloudUrl} (hcs-testbed run --provider in-cluster serves it)\n`);
  return 0;
}

/**
 * A Deployment reads its Secrets and ConfigMaps when its pod starts (envFrom) or reloads them late (mounted
 * certificates): each pod template gets the hash of the Secrets and ConfigMaps of its namespace
 * (`hcs-testbed.io/config-hash`), so that a re-install with new certificates or a new endpoint rolls the pods.
 */
export function stampConfigHashes(objects: Manifest[]): void {
  const byNs = new Map<string, ReturnType<typeof createHash>>();
  for (const x of objects) {
    if (x.kind !== 'Secret' && x.kind !== 'ConfigMap') continue;
    const ns = x.metadata.namespace ?? 'default';
    if (!byNs.has(ns)) byNs.set(ns, createHash('sha256'));
    byNs.get(ns)!.update(JSON.stringify([x.kind, x.metadata.name, x.data ?? null]));
  }
  const hashes = new Map([...byNs].map(([ns, h]) => [ns, h.digest('hex').slice(0, 16)]));
  for (const x of objects) {
    if (x.kind !== 'Deployment') continue;
    const h = hashes.get(x.metadata.namespace ?? 'default');
    if (!h) continue;
    const tpl = (x as Manifest & { spec: { template: { metadata?: { annotations?: Record<string, string> } } } }).spec.template;
    tpl.metadata = { ...(tpl.metadata ?? {}), annotations: { ...(tpl.metadata?.annotations ?? {}), 'hcs-testbed.io/config-hash': h } };
  }
}
