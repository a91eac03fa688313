/**
 * Cluster controller, modelled on cluster-api
 * internal/controllers/cluster/cluster_controller.go and
 * cluster_controller_phases.go (v1beta1):
 * - finalizer cluster.cluster.x-k8s.io;
 * - reconcileExternal: the infrastructure cluster and the control plane get an
 *   ownerReference to the Cluster and the cluster-name label;
 * - infrastructureReady from the infra cluster's status.ready, and
 *   spec.controlPlaneEndpoint copied from it when unset, status.failureDomains
 *   copied from its status.failureDomains;
 * - controlPlaneReady / ControlPlaneInitialized from a KubeadmControlPlane's
 *   status.ready / status.initialized;
 * - phase Pending → Provisioning → Provisioned (→ Deleting).
 *
 * Simplifications (see docs/capi.md): a Cluster without controlPlaneRef has an
 * externally provided control plane that counts as initialized and ready; a
 * Cluster without infrastructureRef counts as infrastructure-ready.
 */
import { FINALIZER_CLUSTER, LABEL_CLUSTER_NAME } from '../../product/api/capi.js';
import type { Cluster, ClusterStatus, FailureDomains, Machine, MachineDeployment, MachineSet, ObjectReference } from '../../product/api/capi.js';
import { getShared } from '../../core/kube/client.js';
import type { KubeObject } from '../../core/kube/types.js';
import { controllerOf, isDeleting, ownerRef } from '../../core/kube/types.js';
import type { Controller, Result } from '../../core/runtime/manager.js';
import type { ControllerContext, Logger } from '../../core/runtime/context.js';
import type { Rng } from '../../core/rng.js';
import { kubeconfigSecretName, reconcileKubeconfigSecret } from './kubeconfig.js';
import { CAPI_DEPLOYMENT, sameJson, ensureOwnerRef, getCondition, keyFor, markFalse, markTrue, splitKey } from './util.js';

export const CLUSTER_CONTROLLER = 'capi-cluster';

interface Readiness {
  status?: { ready?: boolean; initialized?: boolean; failureDomains?: FailureDomains };
  spec?: { controlPlaneEndpoint?: { host: string; port: number } };
}

export class ClusterReconciler implements Controller {
  readonly name = CLUSTER_CONTROLLER;
  private readonly log: Logger;
  /** Serial numbers of the kubeconfig client certificates (a fork: the run's other random names stay as they were). */
  private readonly kubeconfigRng: Rng;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logs.logger(CAPI_DEPLOYMENT, 'cluster');
    this.kubeconfigRng = ctx.rng.fork('cluster-kubeconfig');
  }

  async reconcile(key: string): Promise<Result | void> {
    const { namespace, name } = splitKey(key);
    const cluster = await this.ctx.mgmt.get<Cluster>({ kind: 'Cluster', namespace, name });
    if (!cluster) return;
    if (isDeleting(cluster)) return this.reconcileDelete(cluster);
    if (!cluster.metadata.finalizers?.includes(FINALIZER_CLUSTER)) {
      cluster.metadata.finalizers = [...(cluster.metadata.finalizers ?? []), FINALIZER_CLUSTER];
      await this.ctx.mgmt.update(cluster);
      return; // the update event brings us back
    }
    if (cluster.spec.paused) return;

    const now = this.ctx.clock.now();
    const status: ClusterStatus = structuredClone(cluster.status ?? {});
    let spec = cluster.spec;
    let specChanged = false;

    // Infrastructure.
    if (cluster.spec.infrastructureRef) {
      const infra = await this.external(cluster, cluster.spec.infrastructureRef);
      if (!infra) {
        status.infrastructureReady = false;
        status.conditions = markFalse(status.conditions, 'InfrastructureReady', 'WaitingForInfrastructure', 'Info', `${cluster.spec.infrastructureRef.kind} ${cluster.spec.infrastructureRef.name} not found`, now);
      } else {
        const ready = (infra as Readiness).status?.ready === true;
        status.infrastructureReady = status.infrastructureReady || ready; // upstream never flips it back to false
        status.conditions = ready
          ? markTrue(status.conditions, 'InfrastructureReady', now)
          : markFalse(status.conditions, 'InfrastructureReady', 'WaitingForInfrastructure', 'Info', `waiting for ${infra.kind} ${infra.metadata.name} to be ready`, now);
        const ep = (infra as Readiness).spec?.controlPlaneEndpoint;
        if (ready && ep?.host && !cluster.spec.controlPlaneEndpoint?.host) {
          spec = { ...spec, controlPlaneEndpoint: { host: ep.host, port: ep.port } };
          specChanged = true;
        }
        // cluster_controller_phases.go reconcileInfrastructure (once the infrastructure is or was ready): status.failureDomains
        // copied from the infrastructure cluster's (none there: an empty map, which the API omits).
        if (ready || status.infrastructureReady) {
          const fds = (infra as Readiness).status?.failureDomains;
          if (fds && Object.keys(fds).length) status.failureDomains = structuredClone(fds);
          else delete status.failureDomains;
        }
      }
    } else {
      status.infrastructureReady = true;
      status.conditions = markTrue(status.conditions, 'InfrastructureReady', now);
    }

    // Control plane.
    const cpRef = cluster.spec.controlPlaneRef;
    if (cpRef) {
      const cp = await this.external(cluster, cpRef);
      const st = (cp as Readiness | undefined)?.status;
      const ready = st?.ready === true;
      const initialized = st?.initialized === true || ready;
      status.controlPlaneReady = ready;
      status.conditions = initialized
        ? markTrue(status.conditions, 'ControlPlaneInitialized', now)
        : markFalse(status.conditions, 'ControlPlaneInitialized', 'WaitingForControlPlaneProviderInitialized', 'Info', `waiting for ${cpRef.kind} ${cpRef.name} to be initialized`, now);
      status.conditions = ready
        ? markTrue(status.conditions, 'ControlPlaneReady', now)
        : markFalse(status.conditions, 'ControlPlaneReady', 'WaitingForControlPlane', 'Info', `waiting for ${cpRef.kind} ${cpRef.name} to be ready`, now);
    } else {
      // Simplification: no controlPlaneRef = control plane provided outside of Cluster API.
      status.controlPlaneReady = true;
      status.conditions = markTrue(status.conditions, 'ControlPlaneInitialized', now);
      status.conditions = markTrue(status.conditions, 'ControlPlaneReady', now);
    }

    const infraOk = getCondition(status.conditions, 'InfrastructureReady')?.status === 'True';
    const cpOk = getCondition(status.conditions, 'ControlPlaneReady')?.status === 'True';
    status.conditions =
      infraOk && cpOk
        ? markTrue(status.conditions, 'Ready', now)
        : markFalse(status.conditions, 'Ready', infraOk ? 'WaitingForControlPlane' : 'WaitingForInfrastructure', 'Info', infraOk ? 'control plane not ready' : 'infrastructure not ready', now);

    // Phase (cluster_controller_phases.go reconcilePhase).
    const endpointValid = !!spec.controlPlaneEndpoint?.host && !!spec.controlPlaneEndpoint?.port;
    let phase: ClusterStatus['phase'] = status.phase ?? 'Pending';
    if (cluster.spec.infrastructureRef || cluster.spec.controlPlaneRef) phase = 'Provisioning';
    if (status.infrastructureReady && endpointValid) phase = 'Provisioned';
    if (!cluster.spec.infrastructureRef && !cluster.spec.controlPlaneRef && !endpointValid) phase = 'Pending';
    status.phase = phase;
    status.observedGeneration = cluster.metadata.generation;

    let cur = cluster;
    if (specChanged) {
      cur = await this.ctx.mgmt.update<Cluster>({ ...cluster, spec });
    }
    if (!sameJson(status, cluster.status ?? {})) {
      const prevPhase = cluster.status?.phase;
      await this.ctx.mgmt.updateStatus<Cluster>({ ...cur, status });
      if (prevPhase !== status.phase) {
        this.ctx.events.record({
          source: 'capi',
          type: 'cluster.phase',
          message: `Cluster ${key} phase ${prevPhase ?? '(none)'} -> ${status.phase}`,
          data: { cluster: name, namespace, phase: status.phase },
        });
        this.log.info('cluster phase changed', { cluster: key, phase: status.phase });
      }
    }
    // reconcileKubeconfig: without a control plane provider the Cluster controller writes <cluster>-kubeconfig (src/world/capi/kubeconfig.ts).
    if (!cluster.spec.controlPlaneRef && endpointValid) {
      const r = await reconcileKubeconfigSecret(this.ctx.mgmt, this.ctx.workloads, { ...cur, spec }, ownerRef(cluster, false), this.kubeconfigRng, now);
      if (r === 'created' || r === 'updated') this.log.info(`kubeconfig Secret ${kubeconfigSecretName(name)} ${r}`, { cluster: key });
      if (r === 'waiting-for-ca') return { requeueAfter: 30_000 }; // upstream: "Could not find secret for cluster, requeuing"
    }
    // Safety net besides the watches (infra/control plane objects may appear after us).
    if (status.phase !== 'Provisioned' || !cpOk) return { requeueAfter: 30_000 };
  }

  /** reconcileExternal: fetch a referenced object and make the Cluster its owner. */
  private async external(cluster: Cluster, ref: ObjectReference): Promise<KubeObject | undefined> {
    if (!ref.kind) return undefined;
    // Read-only (the update below writes a copy; the callers only read): the stored object, no deep copy.
    const obj = (await getShared<KubeObject>(this.ctx.mgmt, { kind: ref.kind, namespace: ref.namespace ?? cluster.metadata.namespace, name: ref.name })) as KubeObject | undefined;
    if (!obj) return undefined;
    const refs = ensureOwnerRef(obj.metadata.ownerReferences, ownerRef(cluster, false));
    const labels = { ...(obj.metadata.labels ?? {}), [LABEL_CLUSTER_NAME]: cluster.metadata.name };
    if (!sameJson(refs, obj.metadata.ownerReferences ?? []) || !sameJson(labels, obj.metadata.labels ?? {})) {
      return this.ctx.mgmt.update({ ...obj, metadata: { ...obj.metadata, ownerReferences: refs, labels } });
    }
    return obj;
  }

  /** reconcileDelete: descendants first (MachineDeployments, MachineSets, Machines), then control plane, then infrastructure. */
  private async reconcileDelete(cluster: Cluster): Promise<Result | void> {
    const ns = cluster.metadata.namespace;
    const sel = { namespace: ns, labelSelector: { [LABEL_CLUSTER_NAME]: cluster.metadata.name } };
    if (cluster.status?.phase !== 'Deleting') {
      await this.ctx.mgmt.updateStatus<Cluster>({ ...cluster, status: { ...(cluster.status ?? {}), phase: 'Deleting' } });
      this.ctx.events.record({ source: 'capi', type: 'cluster.phase', message: `Cluster ${keyFor(cluster)} phase -> Deleting`, data: { cluster: cluster.metadata.name, namespace: ns, phase: 'Deleting' } });
      return;
    }
    const mds = await this.ctx.mgmt.list<MachineDeployment>('MachineDeployment', sel);
    const mss = (await this.ctx.mgmt.list<MachineSet>('MachineSet', sel)).filter((o) => !controllerOf(o));
    const machines = (await this.ctx.mgmt.list<Machine>('Machine', sel)).filter((o) => !controllerOf(o));
    for (const o of [...mds, ...mss, ...machines]) {
      if (!isDeleting(o)) await this.ctx.mgmt.delete({ kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name }, { ignoreNotFound: true });
    }
    const anyLeft = (await this.ctx.mgmt.list<Machine>('Machine', sel)).length + mds.length + mss.length > 0;
    if (anyLeft) return { requeueAfter: 5_000 };
    for (const ref of [cluster.spec.controlPlaneRef, cluster.spec.infrastructureRef]) {
      if (!ref?.kind) continue;
      const r = { kind: ref.kind, namespace: ref.namespace ?? ns, name: ref.name };
      const obj = await this.ctx.mgmt.get(r);
      if (obj) {
        if (!isDeleting(obj)) await this.ctx.mgmt.delete(r, { ignoreNotFound: true });
        return { requeueAfter: 5_000 };
      }
    }
    const fresh = await this.ctx.mgmt.get<Cluster>({ kind: 'Cluster', namespace: ns, name: cluster.metadata.name });
    if (!fresh) return;
    fresh.metadata.finalizers = (fresh.metadata.finalizers ?? []).filter((f) => f !== FINALIZER_CLUSTER);
    await this.ctx.mgmt.update(fresh);
  }
}

export function setupClusterController(ctx: ControllerContext): ClusterReconciler {
  const r = new ClusterReconciler(ctx);
  ctx.manager.register(r);
  ctx.mgmt.watch<Cluster>('Cluster', (e) => ctx.manager.enqueue(CLUSTER_CONTROLLER, keyFor(e.object)), { shared: true });
  const toCluster = (e: { object: KubeObject }): void => {
    const o = e.object;
    const owner = o.metadata.ownerReferences?.find((x) => x.kind === 'Cluster' && x.apiVersion.startsWith('cluster.x-k8s.io/'));
    const name = owner?.name ?? o.metadata.labels?.[LABEL_CLUSTER_NAME];
    if (name) ctx.manager.enqueue(CLUSTER_CONTROLLER, `${o.metadata.namespace ?? 'default'}/${name}`);
  };
  ctx.mgmt.watch('HCSCluster', toCluster, { shared: true });
  ctx.mgmt.watch('KubeadmControlPlane', toCluster, { shared: true });
  // A served endpoint appeared or moved (the HTTP facade): the kubeconfig Secrets follow.
  ctx.workloads.onEndpointsChange?.(() => {
    void ctx.mgmt.list<Cluster>('Cluster').then((all) => {
      for (const c of all) ctx.manager.enqueue(CLUSTER_CONTROLLER, keyFor(c));
    });
  });
  // The cluster CA appearing lets a worker-only Cluster's kubeconfig be written.
  ctx.mgmt.watch<KubeObject>('Secret', (e) => {
    const n = e.object.metadata.name;
    if (e.type === 'ADDED' && n.endsWith('-ca')) ctx.manager.enqueue(CLUSTER_CONTROLLER, `${e.object.metadata.namespace ?? 'default'}/${n.slice(0, -3)}`);
  }, { shared: true });
  // Machines going away unblock a deleting Cluster.
  ctx.mgmt.watch<Machine>('Machine', (e) => {
    if (e.type === 'DELETED' && e.object.spec?.clusterName) ctx.manager.enqueue(CLUSTER_CONTROLLER, `${e.object.metadata.namespace ?? 'default'}/${e.object.spec.clusterName}`);
  }, { shared: true });
  return r;
}
