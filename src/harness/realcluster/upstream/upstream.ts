/**
 * `hcs-testbed run --backend apiserver --capi upstream`: the upstream Cluster
 * API v1.10.10 managers (core, CABPK, KCP; tools/capi) are the Cluster API.
 * The testbed runs only its own parts: mock-hcs, the TypeScript HCS
 * provider, the guests, the workload clusters (served over HTTPS by the
 * facade, with the `<cluster>-kubeconfig` Secrets the managers read), the
 * Kube-OVN AppRelease controller, a garbage collector (a bare apiserver has
 * no kube-controller-manager) and what a site has around Cluster API
 * (src/harness/realcluster/upstream/harness.ts).
 *
 * Once per run (prepareUpstreamCluster, called by backends.ts after it
 * started kube-apiserver + etcd from tools/kube): the testbed's
 * infrastructure and AppRelease CRDs (with the contract label
 * `cluster.x-k8s.io/v1beta1: v1beta1`, which the core controllers look a
 * provider's API version up by) beside the upstream CRDs (not the testbed's
 * own Cluster API CRDs), the testbed's admission webhook for the HCS kinds,
 * then the managers with their own webhooks. Per scenario: the cluster is
 * emptied and a testbed starts whose clock is paced by the wall clock
 * (src/harness/realcluster/paced.ts).
 *
 * v1.10's webhook servers bind every interface, so this refuses to start
 * unless the process sees only `lo` (run it under `unshare -n sh -c 'ip
 * link set lo up && exec …'`); everything else listens on 127.0.0.1.
 */
import type { CustomResourceDefinition } from '../../../product/api/crds/index.js';
import { CRDS } from '../../../product/api/crds/index.js';
import { DEFAULT_NAMESPACES } from '../../../world/facade/controllers.js';
import { findKubeBinaries } from '../apiserver/binaries.js';
import { findCapiBinaries } from './capi-binaries.js';
import { CONTRACT_LABEL, loadUpstreamCrds } from './capi-crds.js';
import { loopbackOnlyProblem, startUpstreamManagers, type UpstreamManagers } from './capi-managers.js';
import { ensureNamespaces, installCrds, loadKubeconfig } from '../apiserver/crds.js';
import { installWebhookConfigurations, startAdmissionWebhook, type AdmissionWebhook } from '../apiserver/webhook.js';

/** Groups whose CRDs come from upstream when the upstream managers run. */
const UPSTREAM_GROUPS = new Set(['cluster.x-k8s.io', 'bootstrap.cluster.x-k8s.io', 'controlplane.cluster.x-k8s.io']);

/** The testbed's CRDs that stay beside upstream's: HCS infrastructure (labelled for the v1beta1 contract) and AppRelease. */
export function testbedCrdsForUpstream(): CustomResourceDefinition[] {
  return CRDS.filter((c) => !UPSTREAM_GROUPS.has(c.spec.group)).map((c) =>
    c.spec.group === 'infrastructure.cluster.x-k8s.io' ? { ...c, metadata: { ...c.metadata, labels: { ...(c.metadata.labels ?? {}), [CONTRACT_LABEL]: 'v1beta1' } } } : c,
  );
}

/** Why the upstream mode cannot run here (binaries missing, network interfaces beyond lo), or undefined. */
export function upstreamProblem(): string | undefined {
  const kube = findKubeBinaries();
  if ('missing' in kube) return `${kube.missing} (build them with tools/kube/build.sh)`;
  const capi = findCapiBinaries();
  if ('missing' in capi) return `${capi.missing} (build them with tools/capi/build.sh)`;
  return loopbackOnlyProblem();
}

/** HCS_TESTBED_KEEP_LOGS=1: keep the apiserver's and the managers' temp dirs (their logs) after the run. */
export function keepLogs(): boolean {
  return process.env.HCS_TESTBED_KEEP_LOGS === '1';
}

export interface PreparedUpstream {
  webhook: AdmissionWebhook;
  managers: UpstreamManagers;
}

/**
 * CRDs (upstream's + the testbed's non-Cluster-API ones), namespaces, the
 * testbed's admission webhook, then the three managers with their webhooks,
 * each ready. The caller stops `managers` and closes `webhook`.
 */
export async function prepareUpstreamCluster(kubeconfigPath: string, o: { log?: (line: string) => void; keepDir?: boolean } = {}): Promise<PreparedUpstream> {
  const capi = findCapiBinaries();
  if ('missing' in capi) throw new Error(capi.missing);
  const t0 = Date.now();
  const kc = loadKubeconfig(kubeconfigPath);
  await installCrds(kc, [...testbedCrdsForUpstream(), ...loadUpstreamCrds(capi.crds)], 120_000);
  await ensureNamespaces(kc, DEFAULT_NAMESPACES);
  // The testbed's webhook first: its probes (an HCS pool, a MachineDeployment dry run) must not meet upstream's validation yet.
  const webhook = await startAdmissionWebhook();
  try {
    await installWebhookConfigurations(kc, webhook);
    const managers = await startUpstreamManagers(kubeconfigPath, { binaries: capi, installCrds: false, ...(o.keepDir ? { keepDir: true } : {}) });
    o.log?.(`upstream managers ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    return { webhook, managers };
  } catch (e) {
    await webhook.close();
    throw e;
  }
}
