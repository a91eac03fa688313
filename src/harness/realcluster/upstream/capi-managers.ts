/**
 * The upstream Cluster API managers (core, CABPK, KCP; tools/capi/build.sh)
 * started against a real kube-apiserver, the way an envtest-style harness
 * runs them: the upstream CRDs installed, each manager's webhook server given
 * a serving certificate from a generated CA (`--webhook-cert-dir`), and its
 * own validating / mutating webhook configurations (config/webhook/manifests.yaml
 * of the same version) registered with `clientConfig.url` on 127.0.0.1 and
 * that CA, so upstream defaulting and validation run instead of the testbed's.
 *
 * Flags: --kubeconfig, --leader-elect=false, --diagnostics-address=0 (no
 * metrics listener), --health-addr 127.0.0.1:<port>, --webhook-port <port>,
 * --webhook-cert-dir. v1.10's webhook server has no bind-address flag and
 * listens on every interface, so this refuses to start unless the process is
 * in a network namespace with only `lo` (e.g. `unshare -n sh -c 'ip link set
 * lo up && exec …'`): nothing of the testbed may listen beyond loopback.
 */
import { randomInt } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { SeededRng } from '../../../core/rng.js';
import { kubeRequest, loadKubeconfig } from '../../../core/kube/client-node.js';
import { generateCA, issueCertificate } from '../../../core/pki/index.js';
import { freePort, get, killGroup, start, waitFor, type Proc } from '../apiserver/apiserver.js';
import { findCapiBinaries, type CapiBinaries } from './capi-binaries.js';
import { loadUpstreamCrds } from './capi-crds.js';
import { installCrds } from '../apiserver/crds.js';
import { writeSecretFile } from '../../../core/secret-file.js';

export type ManagerName = 'core' | 'bootstrap' | 'controlplane';

export interface UpstreamManagers {
  /** Health endpoints (http://127.0.0.1:<port>) per manager. */
  health: Record<ManagerName, string>;
  /** Webhook server ports per manager. */
  webhookPorts: Record<ManagerName, number>;
  /** Temp dir: certs and the managers' logs (<manager>.log). */
  dir: string;
  stop(): Promise<void>;
}

export interface UpstreamManagersOptions {
  binaries?: CapiBinaries;
  /** Startup timeout (default 120 s: three Go managers start in ~5-20 s each on 2 busy cores). */
  timeoutMs?: number;
  keepDir?: boolean;
  /** Install the upstream CRDs first (default true). */
  installCrds?: boolean;
}

/** Why the managers may not start here (network interfaces beyond loopback), or undefined. */
export function loopbackOnlyProblem(): string | undefined {
  const others = Object.keys(networkInterfaces()).filter((n) => n !== 'lo');
  if (others.length === 0) return undefined;
  return `the v1.10 managers' webhook servers bind every interface, and this process sees ${others.join(', ')} besides lo: run it in a network namespace with only lo (unshare -n sh -c 'ip link set lo up && exec …')`;
}

interface WebhookClientConfig {
  service?: { name: string; namespace: string; path?: string };
  url?: string;
  caBundle?: string;
}
interface WebhookConfiguration {
  apiVersion: string;
  kind: 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration';
  metadata: { name: string };
  webhooks: { name: string; clientConfig: WebhookClientConfig }[];
}

/**
 * A manager's webhook configurations with `service` replaced by a URL on
 * 127.0.0.1:<port> and the CA bundle; names prefixed so the three managers'
 * configurations (all called mutating- / validating-webhook-configuration
 * upstream, kustomize adds a prefix) do not collide.
 */
export function webhookConfigurationsFor(manager: ManagerName, yamlText: string, port: number, caPem: string): WebhookConfiguration[] {
  const out: WebhookConfiguration[] = [];
  for (const doc of parseAllDocuments(yamlText)) {
    const o = doc.toJS() as WebhookConfiguration | null;
    if (!o) continue;
    out.push({
      ...o,
      metadata: { name: `capi-${manager}-${o.metadata.name}` },
      webhooks: o.webhooks.map((w) => ({
        ...w,
        clientConfig: { url: `https://127.0.0.1:${port}${w.clientConfig.service?.path ?? '/'}`, caBundle: Buffer.from(caPem).toString('base64') },
      })),
    });
  }
  return out;
}

const BINARY: Record<ManagerName, keyof Pick<CapiBinaries, 'core' | 'bootstrap' | 'controlPlane'>> = { core: 'core', bootstrap: 'bootstrap', controlplane: 'controlPlane' };
const MANAGERS: ManagerName[] = ['core', 'bootstrap', 'controlplane'];

/** Install the upstream CRDs and webhooks, start the three managers, wait until each is ready. */
export async function startUpstreamManagers(kubeconfigPath: string, opts: UpstreamManagersOptions = {}): Promise<UpstreamManagers> {
  const problem = loopbackOnlyProblem();
  if (problem) throw new Error(problem);
  const found = opts.binaries ?? findCapiBinaries();
  if ('missing' in found) throw new Error(found.missing);
  const bins = found;
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  const kc = loadKubeconfig(kubeconfigPath);
  const server = kc.getCurrentCluster()!.server.replace(/\/+$/, '');
  const dir = mkdtempSync(join(tmpdir(), 'hcs-testbed-capi-'));
  const procs: Proc[] = [];
  const stop = async (): Promise<void> => {
    for (const p of [...procs].reverse()) await killGroup(p);
    if (!opts.keepDir) rmSync(dir, { recursive: true, force: true });
  };
  try {
    if (opts.installCrds !== false) await installCrds(kc, loadUpstreamCrds(bins.crds), 120_000);
    const now = Date.now();
    const rng = new SeededRng(randomInt(2 ** 31));
    const ca = await generateCA(rng, now, 'hcs-testbed-capi-webhook-ca');
    const serving = await issueCertificate(ca, { commonName: 'capi-webhooks', dnsNames: ['localhost'], ips: ['127.0.0.1'] }, rng, now);
    const health = {} as Record<ManagerName, string>;
    const webhookPorts = {} as Record<ManagerName, number>;
    for (const m of MANAGERS) {
      const certDir = join(dir, `${m}-certs`);
      mkdirSync(certDir);
      writeFileSync(join(certDir, 'tls.crt'), serving.certPem);
      writeSecretFile(join(certDir, 'tls.key'), serving.keyPem);
      const hp = await freePort();
      const wp = await freePort();
      health[m] = `http://127.0.0.1:${hp}`;
      webhookPorts[m] = wp;
      for (const cfg of webhookConfigurationsFor(m, readFileSync(join(bins.dir, 'webhooks', `${m}.yaml`), 'utf8'), wp, ca.certPem)) {
        const plural = cfg.kind === 'MutatingWebhookConfiguration' ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations';
        const base = `${server}/apis/admissionregistration.k8s.io/v1/${plural}`;
        await kubeRequest(kc, 'DELETE', new URL(`${base}/${cfg.metadata.name}`));
        const r = await kubeRequest(kc, 'POST', new URL(base), cfg);
        if (r.status >= 300) throw new Error(`${cfg.kind} ${cfg.metadata.name} rejected (${r.status}): ${JSON.stringify(r.body)}`);
      }
      procs.push(
        start(m, bins[BINARY[m]], [`--kubeconfig=${kubeconfigPath}`, '--leader-elect=false', '--diagnostics-address=0', `--health-addr=127.0.0.1:${hp}`, `--webhook-port=${wp}`, `--webhook-cert-dir=${certDir}`], dir),
      );
    }
    for (const [i, m] of MANAGERS.entries()) {
      await waitFor(`${m} manager ready`, procs[i]!, deadline, async () => (await get(`${health[m]}/readyz`)).status === 200);
    }
    return { health, webhookPorts, dir, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
