/**
 * What the testbed itself plays when the upstream Cluster API managers are
 * the Cluster API (`--capi upstream`), i.e. what a real HCS site has around
 * Cluster API that is neither Cluster API nor the HCS provider:
 *
 * - **The workload clusters' API servers**: each Cluster's workload cluster
 *   (an embedded store) is created as soon as the Cluster appears, so the
 *   managers' cluster cache finds it served by the facade.
 * - **The externally provided control plane** of a Cluster without
 *   `spec.controlPlaneRef` (the worker fixture: the control plane exists
 *   outside Cluster API). Upstream then expects someone else to provide what
 *   KCP would: the cluster CA Secret `<cluster>-ca` (CABPK refuses a worker
 *   join without it: bootstrap/kubeadm/internal/controllers/kubeadmconfig_controller.go,
 *   joinWorker → certificates.LookupCached / EnsureAllExist), a
 *   `<cluster>-kubeconfig` Secret pointing at the served workload API (the
 *   Cluster controller would otherwise write one for spec.controlPlaneEndpoint,
 *   unreachable here: internal/controllers/cluster/cluster_controller_phases.go
 *   reconcileKubeconfig, which never rewrites an existing one), and the
 *   Cluster's `ControlPlaneInitialized` condition (without control plane
 *   Machines upstream never sets it, internal/controllers/cluster/cluster_controller.go
 *   reconcileControlPlaneInitialized, and returns early once it is True;
 *   CABPK holds every worker join until it is).
 * - **For a Cluster with KCP**: the site's load balancer in front of
 *   `spec.controlPlaneEndpoint` (KCP's `<cluster>-kubeconfig` is pointed at
 *   the served workload API) and kubeadm init's upload-config phase
 *   (`kube-system/kubeadm-config`), see pointKubeconfigAtServedApi and
 *   uploadKubeadmConfig below.
 * - **The model's `source: capi` KCP events** (`kcp.machine-created`,
 *   `kcp.scale-down`), which upstream KCP does not write: on upstream they are
 *   the harness's observations of KCP's writes (control plane Machines
 *   appearing, getting a deletionTimestamp), marked `data.observed: true`,
 *   once per Machine, and `kcp.certificates-expiry` once per KubeadmConfig
 *   KCP annotates (src/harness/realcluster/upstream/kcp-events.ts).
 * - The cloud controller manager's node lifecycle controller is not here: it
 *   runs in every testbed, whichever Cluster API (src/world/workload/node-lifecycle.ts).
 */
import { LABEL_CLUSTER_NAME } from '../../../product/api/capi.js';
import type { Cluster, Condition } from '../../../product/api/capi.js';
import type { KubeadmControlPlane } from '../../../product/api/capi.js';
import { secretValue, type Node, type Secret } from '../../../product/api/core.js';
import { KUBEADM_CONFIGMAP, writeKubeadmConfig } from '../../../world/capi/kubeadm-config.js';
import { rfc3339 } from '../../../core/clock.js';
import { KUBECONFIG_DATA_KEY, SECRET_TYPE_CLUSTER, kubeconfigSecretName } from '../../../product/api/capi.js';
import { renderKubeconfig } from '../../../world/capi/kubeconfig.js';
import { KubeApiError } from '../../../core/kube/errors.js';
import { generateCA, issueCertificateSync } from '../../../core/pki/index.js';
import type { Controller, Result } from '../../../core/runtime/manager.js';
import type { ControllerContext } from '../../../core/runtime/context.js';
import { splitKey } from '../../../world/capi/util.js';
import { observeCertificateExpiries, observeKcpMachines } from './kcp-events.js';

export const HARNESS_CONTROLLER = 'upstream-external-control-plane';
/** kubeadm's mark-control-plane label. */
const NODE_ROLE_CONTROL_PLANE = 'node-role.kubernetes.io/control-plane';

export interface ServedEndpoint {
  server: string;
  caPem?: string;
  token: string;
}

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

class ExternalControlPlane implements Controller {
  readonly name = HARNESS_CONTROLLER;
  constructor(
    private readonly ctx: ControllerContext,
    private readonly endpoint: (namespace: string, name: string) => ServedEndpoint,
    private readonly createWorkload: (namespace: string, name: string) => void,
  ) {}

  async reconcile(key: string): Promise<Result | void> {
    const { namespace, name } = splitKey(key);
    const cluster = await this.ctx.mgmt.get<Cluster>({ kind: 'Cluster', namespace, name });
    if (!cluster || cluster.metadata.deletionTimestamp) return;
    this.createWorkload(namespace, name);
    if (cluster.spec.controlPlaneRef) {
      await this.uploadKubeadmConfig(cluster);
      return this.pointKubeconfigAtServedApi(cluster);
    }
    const now = this.ctx.clock.now();
    const caRef = { kind: 'Secret', namespace, name: `${name}-ca` };
    const kcRef = { kind: 'Secret', namespace, name: kubeconfigSecretName(name) };
    let caSecret = await this.ctx.mgmt.get<Secret>(caRef);
    const owner = { apiVersion: cluster.apiVersion, kind: 'Cluster', name, uid: cluster.metadata.uid!, controller: false };
    const labels = { [LABEL_CLUSTER_NAME]: name };
    let ca: { certPem: string; keyPem: string } | undefined;
    if (!caSecret) ca = await generateCA(this.ctx.rng, now, 'kubernetes');
    else ca = { certPem: secretValue(caSecret, 'tls.crt') ?? '', keyPem: secretValue(caSecret, 'tls.key') ?? '' };
    // The kubeconfig first: once the CA exists, the Cluster controller would write its own for the unreachable endpoint.
    if (!(await this.ctx.mgmt.get<Secret>(kcRef))) {
      const ep = this.endpoint(namespace, name);
      const client = issueCertificateSync(ca, { commonName: 'kubernetes-admin', organization: 'system:masters' }, this.ctx.rng, now);
      const value = renderKubeconfig({ clusterName: name, server: ep.server, ...(ep.caPem ? { caPem: ep.caPem } : { insecureSkipTlsVerify: true }), clientCertPem: client.certPem, clientKeyPem: client.keyPem, token: ep.token });
      await this.createIgnoringExisting({ apiVersion: 'v1', kind: 'Secret', metadata: { name: kcRef.name, namespace, labels, ownerReferences: [owner] }, type: SECRET_TYPE_CLUSTER, data: { [KUBECONFIG_DATA_KEY]: b64(value) } });
    }
    if (!caSecret) {
      caSecret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: caRef.name, namespace, labels, ownerReferences: [owner] }, type: SECRET_TYPE_CLUSTER, data: { 'tls.crt': b64(ca.certPem), 'tls.key': b64(ca.keyPem) } };
      await this.createIgnoringExisting(caSecret);
    }
    const conds: Condition[] = cluster.status?.conditions ?? [];
    if (conds.find((c) => c.type === 'ControlPlaneInitialized')?.status !== 'True') {
      const next = [...conds.filter((c) => c.type !== 'ControlPlaneInitialized'), { type: 'ControlPlaneInitialized', status: 'True', lastTransitionTime: rfc3339(Date.now()) } as Condition];
      try {
        await this.ctx.mgmt.updateStatus<Cluster>({ ...cluster, status: { ...(cluster.status ?? {}), conditions: next } });
      } catch (e) {
        if (e instanceof KubeApiError && e.reason === 'Conflict') return { requeueAfter: 200 };
        throw e;
      }
      // Check again: the Cluster controller may have patched its own verdict over it meanwhile.
      return { requeueAfter: 1_000 };
    }
  }

  /**
   * A Cluster with a control plane provider (KCP): KCP generates the cluster
   * CA (`<cluster>-ca`) and writes `<cluster>-kubeconfig` for
   * `spec.controlPlaneEndpoint` (controlplane/kubeadm/internal/controllers/helpers.go
   * reconcileKubeconfig → kubeconfig.CreateSecretWithOwner), an address (the
   * site's VIP / load balancer in front of the control plane) that does not
   * route in the managers' network namespace. The harness plays that load
   * balancer: it rewrites the kubeconfig's server to the served workload API
   * (client certificate signed by the cluster CA, plus the facade's token).
   * KCP keeps an existing kubeconfig and only regenerates it when its client
   * certificate is due for rotation (same function, NeedsClientCertRotation);
   * the harness checks again every few seconds.
   */
  private async pointKubeconfigAtServedApi(cluster: Cluster): Promise<Result> {
    const namespace = cluster.metadata.namespace ?? 'default';
    const name = cluster.metadata.name;
    const ca = await this.ctx.mgmt.get<Secret>({ kind: 'Secret', namespace, name: `${name}-ca` });
    const kc = await this.ctx.mgmt.get<Secret>({ kind: 'Secret', namespace, name: kubeconfigSecretName(name) });
    if (!ca?.data?.['tls.key'] || !kc) return { requeueAfter: 500 };
    const ep = this.endpoint(namespace, name);
    const current = Buffer.from(kc.data?.[KUBECONFIG_DATA_KEY] ?? '', 'base64').toString('utf8');
    if (current.includes(`server: ${ep.server}`) && current.includes(ep.token)) return { requeueAfter: 5_000 };
    const pair = { certPem: secretValue(ca, 'tls.crt') ?? '', keyPem: secretValue(ca, 'tls.key')! };
    // Wall-clock validity: the managers check the certificate's expiry against the wall clock.
    const client = issueCertificateSync(pair, { commonName: 'kubernetes-admin', organization: 'system:masters' }, this.ctx.rng, Date.now());
    const value = renderKubeconfig({ clusterName: name, server: ep.server, ...(ep.caPem ? { caPem: ep.caPem } : { insecureSkipTlsVerify: true }), clientCertPem: client.certPem, clientKeyPem: client.keyPem, token: ep.token });
    try {
      await this.ctx.mgmt.update<Secret>({ ...kc, data: { ...(kc.data ?? {}), [KUBECONFIG_DATA_KEY]: b64(value) } });
    } catch (e) {
      if (e instanceof KubeApiError && e.reason === 'Conflict') return { requeueAfter: 200 };
      throw e;
    }
    this.ctx.events.record({ source: 'workload', type: 'harness.kubeconfig-served', message: `${namespace}/${kubeconfigSecretName(name)}: server ${ep.server} (the served workload API; KCP wrote ${cluster.spec.controlPlaneEndpoint?.host ?? '?'}:${cluster.spec.controlPlaneEndpoint?.port ?? '?'})`, data: { cluster: name } });
    return { requeueAfter: 5_000 };
  }

  /**
   * kubeadm init's upload-config phase: once the first control plane Node
   * registered, `kube-system/kubeadm-config` holds the ClusterConfiguration.
   * The guest plays kubeadm init only as far as the Node (in the model, the
   * testbed's KCP writes this ConfigMap); upstream KCP reads it to set
   * `status.initialized` (controlplane/kubeadm/internal/workload_cluster.go
   * ClusterStatus → HasKubeadmConfig; controllers/status.go updateStatus) and
   * from then on updates it itself during upgrades. Written once, only while
   * missing.
   */
  private async uploadKubeadmConfig(cluster: Cluster): Promise<void> {
    const namespace = cluster.metadata.namespace ?? 'default';
    const ref = cluster.spec.controlPlaneRef;
    if (ref?.kind !== 'KubeadmControlPlane') return;
    const wl = this.ctx.workloads.client(namespace, cluster.metadata.name);
    if (await wl.get({ kind: 'ConfigMap', ...KUBEADM_CONFIGMAP })) return;
    const initialized = (await wl.list<Node>('Node')).some((n) => n.metadata.labels?.[NODE_ROLE_CONTROL_PLANE] !== undefined);
    if (!initialized) return;
    const kcp = await this.ctx.mgmt.get<KubeadmControlPlane>({ kind: 'KubeadmControlPlane', namespace, name: ref.name });
    if (!kcp) return;
    await writeKubeadmConfig(wl, cluster, kcp, kcp.spec.version, kcp.spec.kubeadmConfigSpec.clusterConfiguration?.dns?.imageTag ?? '');
    this.ctx.events.record({ source: 'workload', type: 'harness.kubeadm-config-uploaded', message: `${namespace}/${cluster.metadata.name}: kube-system/kubeadm-config uploaded (kubeadm init upload-config, Kubernetes ${kcp.spec.version})`, data: { cluster: cluster.metadata.name } });
  }

  private async createIgnoringExisting(o: Secret): Promise<void> {
    try {
      await this.ctx.mgmt.create<Secret>(o);
    } catch (e) {
      if (!(e instanceof KubeApiError && e.reason === 'AlreadyExists')) throw e;
    }
  }
}

export interface HarnessOptions {
  endpoint: (namespace: string, name: string) => ServedEndpoint;
  createWorkload: (namespace: string, name: string) => void;
}

/** Register the harness controllers and the KCP observer; returns a function that stops their watches. */
export function setupUpstreamHarness(ctx: ControllerContext, o: HarnessOptions): () => void {
  ctx.manager.register(new ExternalControlPlane(ctx, o.endpoint, o.createWorkload));
  const stopClusters = ctx.mgmt.watch<Cluster>('Cluster', (e) => {
    if (e.type !== 'DELETED') ctx.manager.enqueue(HARNESS_CONTROLLER, `${e.object.metadata.namespace ?? 'default'}/${e.object.metadata.name}`);
  }, { shared: true });
  const log = ctx.logs.logger('upstream-harness', 'kcp-observer');
  const stopMachines = observeKcpMachines({ mgmt: ctx.mgmt, events: ctx.events, warn: (msg) => log.error(msg) });
  const stopExpiries = observeCertificateExpiries({ mgmt: ctx.mgmt, events: ctx.events, workload: (ns, name) => ctx.workloads.client(ns, name), warn: (msg) => log.error(msg) });
  return () => {
    stopClusters();
    stopMachines();
    stopExpiries();
  };
}
