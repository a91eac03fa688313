/**
 * The HCS infrastructure provider: HCSCluster, HCSMachineConfigPool and
 * HCSMachine controllers (see docs/provider.md).
 */
import { LABEL_CLUSTER_NAME, LABEL_CONTROL_PLANE, type Cluster, type KubeadmControlPlane, type Machine, type MachineDeployment } from '../api/capi.js';
import type { HCSCluster, HCSMachine, HCSMachineConfigPool } from '../api/hcs.js';
import type { HcsClient } from '../cloud/index.js';
import type { KubeObject, WatchEvent } from '../../core/kube/types.js';
import { getShared } from '../../core/kube/client.js';
import { jsonEqual } from '../../core/kube/patch.js';
import type { ControllerContext } from '../../core/runtime/context.js';
import type { Controller, Result } from '../../core/runtime/manager.js';
import { defaultOsSupportMatrix, type OsSupportMatrix } from '../matrix/matrix.js';
import { CLUSTER_WORKLOAD_CONTROLLER, HCSClusterWorkloadController } from './clusterworkload.js';
import type { CloudApi } from './cloud-api.js';
import { EvsDiskClaimer, type DiskClaimer } from './disks.js';
import { CLUSTER_CONTROLLER, HCSClusterController } from './hcscluster.js';
import { HCSMachineController, MACHINE_CONTROLLER } from './hcsmachine.js';
import { POOL_CONTROLLER, PoolController, enqueuePoolRefresh } from './pool.js';
import { surgeContext } from './surge.js';

export type { CloudApi } from './cloud-api.js';
export { EvsDiskClaimer, type DiskClaimer, type DiskIdentity, type DiskRequest, type ClaimedDisk } from './disks.js';
export {
  injectCloudInit,
  parseCloudConfig,
  patchJoinConfiguration,
  patchInitConfiguration,
  INIT_CONFIG_PATH,
  JOIN_CONFIG_PATH,
  KUBELET_CERT_PATH,
  KUBELET_KEY_PATH,
  type CloudConfigDoc,
  type Injection,
} from './cloudinit.js';
export * from './labels.js';
export { HCSClusterController, CLUSTER_CONTROLLER, resolveSubnets } from './hcscluster.js';
export { HCSMachineController, MACHINE_CONTROLLER } from './hcsmachine.js';
export { COND_POOL, COND_DISKS, COND_INSTANCE, COND_READY, STUCK_AFTER_MS } from './machine-wait.js';
export { clientTokenFor } from './server-build.js';
export { HCSClusterWorkloadController, CLUSTER_WORKLOAD_CONTROLLER, COND_VERSIONS } from './clusterworkload.js';
export {
  reconcileKubeOvnRelease,
  desiredKubeOvnValues,
  clusterForHCSCluster,
  KUBE_OVN_APPRELEASE,
  KUBE_OVN_NAMESPACE,
  KUBE_OVN_RELEASE_NAME,
  ANN_KUBE_OVN_VERSION,
  ANN_REGISTRY,
  DEFAULT_REGISTRY,
  COND_KUBE_OVN,
  type KubeOvnValues,
} from './kubeovn.js';
export { ruleForCloudError, cloudErrorReason } from './cloud-errors.js';
export { surgeContext, surgeMessage, COND_DISK_REUSE, type SurgeContext } from './surge.js';
export { PoolController, POOL_CONTROLLER, POOL_REFRESH_MS, bindEntry, releaseEntry, syncEntries } from './pool.js';

export interface ProviderOptions {
  /** The cloud (one project for now). Any object with the CloudApi methods works (tests). */
  cloud: HcsClient | CloudApi;
  /** Injectable: tests swap in a broken one to prove scenarios can fail. */
  diskClaimer?: DiskClaimer;
  /** OS Support Matrix for the version checks (default: data/os-support-matrix.yaml). */
  matrix?: OsSupportMatrix;
  /** MD-3 detection (default surgeContext); tests swap in a blind one to prove the maxsurge scenario fails without it. */
  surgeCheck?: typeof surgeContext;
}

export interface ProviderControllers {
  cluster: HCSClusterController;
  pool: PoolController;
  machine: HCSMachineController;
  workload: HCSClusterWorkloadController;
  /** Names registered on the Manager. */
  readonly names: readonly string[];
  /**
   * Model a process restart: every provider controller stops (queued and
   * delayed work is lost), fresh controller instances replace the old ones
   * (no in-memory caches, predicates, mutexes or waiting lists survive; a
   * fresh default DiskClaimer too), and every object is resynced, as a new
   * process's informers list them.
   */
  crash(): void;
  restart(): Promise<void>;
}

function key(o: KubeObject): string {
  return `${o.metadata.namespace ?? 'default'}/${o.metadata.name}`;
}

/**
 * Enqueue on changes that matter to the object's own controller: spec
 * (generation), deletion, finalizers, owners, labels, annotations. Status
 * writes of the controller itself do not re-trigger it (controller-runtime's
 * GenerationChanged-style predicate), so a changing status message cannot
 * cause a hot loop; polling goes through requeueAfter.
 */
function changedPredicate(): ((e: WatchEvent) => boolean) & { reset(): void } {
  const seen = new Map<string, unknown[]>();
  const f = (e: WatchEvent): boolean => {
    const k = key(e.object);
    if (e.type === 'DELETED') {
      seen.delete(k);
      return true;
    }
    const m = e.object.metadata;
    const sig: unknown[] = [m.uid, m.generation, m.deletionTimestamp, m.finalizers, m.ownerReferences, m.labels, m.annotations];
    // Compared field by field as JSON data (shared, unchanged subtrees by reference first): no
    // serialization of e.g. a large last-applied-configuration annotation on every status write.
    const prev = seen.get(k);
    if (prev && sig.every((v, i) => jsonEqual(v, prev[i]))) return false;
    seen.set(k, sig);
    return true;
  };
  return Object.assign(f, { reset: () => seen.clear() });
}

/** A Manager registration whose implementation can be replaced (a restarted process). */
class Slot<C extends Controller> implements Controller {
  constructor(
    readonly name: string,
    public impl: C,
  ) {}
  /** Forwarded: an aggregating implementation keeps its coalescing behind the slot. */
  get coalesce(): boolean | undefined {
    return this.impl.coalesce;
  }
  reconcile(k: string): Promise<Result | void> {
    return this.impl.reconcile(k);
  }
}

/** Register the provider's controllers and their watches on ctx.manager / ctx.mgmt. */
export function setupProviderControllers(ctx: ControllerContext, opts: ProviderOptions): ProviderControllers {
  // HcsClient's wire types are richer than CloudApi's; both are structurally compatible.
  const cloud: CloudApi = opts.cloud;
  const matrix = opts.matrix ?? defaultOsSupportMatrix();
  const build = () => {
    const disks = opts.diskClaimer ?? new EvsDiskClaimer(cloud);
    return {
      cluster: new HCSClusterController(ctx, cloud),
      pool: new PoolController(ctx, cloud),
      machine: new HCSMachineController(ctx, cloud, disks, opts.surgeCheck),
      workload: new HCSClusterWorkloadController(ctx, matrix),
    };
  };
  const first = build();
  const slots = {
    cluster: new Slot(CLUSTER_CONTROLLER, first.cluster),
    pool: new Slot(POOL_CONTROLLER, first.pool),
    machine: new Slot(MACHINE_CONTROLLER, first.machine),
    workload: new Slot(CLUSTER_WORKLOAD_CONTROLLER, first.workload),
  };
  for (const s of Object.values(slots)) ctx.manager.register(s);

  const clusterChanged = changedPredicate();
  const machineChanged = changedPredicate();
  const poolSpecChanged = changedPredicate();
  /** HCSCluster keys of a Cluster (its infrastructureRef). */
  const hcKeyOfCluster = async (ns: string, clusterName: string): Promise<string | undefined> => {
    const c = await getShared<Cluster>(ctx.mgmt, { kind: 'Cluster', namespace: ns, name: clusterName });
    const ref = c?.spec.infrastructureRef;
    return ref?.kind === 'HCSCluster' ? `${ref.namespace ?? ns}/${ref.name}` : c ? `${ns}/${clusterName}` : undefined;
  };
  const enqueueWorkload = (ns: string, clusterName: string | undefined): void => {
    if (!clusterName) return;
    void hcKeyOfCluster(ns, clusterName).then((k) => {
      if (k) ctx.manager.enqueue(CLUSTER_WORKLOAD_CONTROLLER, k);
    });
  };

  ctx.mgmt.watch<HCSCluster>('HCSCluster', (e) => {
    if (clusterChanged(e)) ctx.manager.enqueue(CLUSTER_CONTROLLER, key(e.object));
    // Status included: the workload side starts once the cluster is ready (OVN-1).
    if (e.type !== 'DELETED') ctx.manager.enqueue(CLUSTER_WORKLOAD_CONTROLLER, key(e.object));
  }, { shared: true });
  ctx.mgmt.watch<HCSMachineConfigPool>('HCSMachineConfigPool', (e: WatchEvent<HCSMachineConfigPool>) => {
    const k = key(e.object);
    if (e.type !== 'DELETED' && !slots.pool.impl.ownWrite(k)) enqueuePoolRefresh(ctx, e.object.metadata.namespace ?? 'default', e.object.metadata.name);
    for (const m of slots.machine.impl.takeWaiting(k)) ctx.manager.enqueue(MACHINE_CONTROLLER, m);
    // A spec edit (e.g. an appended persistent disk, DISK-6) concerns the machines bound to its entries.
    if (poolSpecChanged(e) && e.type === 'MODIFIED') {
      for (const en of e.object.status?.entries ?? []) if (en.machine) ctx.manager.enqueue(MACHINE_CONTROLLER, `${e.object.metadata.namespace ?? 'default'}/${en.machine}`);
    }
  }, { shared: true });
  ctx.mgmt.watch<HCSMachine>('HCSMachine', (e: WatchEvent<HCSMachine>) => {
    if (machineChanged(e)) ctx.manager.enqueue(MACHINE_CONTROLLER, key(e.object));
    const p = e.object.spec.configPoolRef?.name;
    if (e.type === 'DELETED' && p) enqueuePoolRefresh(ctx, e.object.metadata.namespace ?? 'default', p);
  }, { shared: true });
  ctx.mgmt.watch<Machine>('Machine', (e: WatchEvent<Machine>) => {
    const ref = e.object.spec.infrastructureRef;
    const ns = e.object.metadata.namespace ?? 'default';
    if (ref?.kind === 'HCSMachine') ctx.manager.enqueue(MACHINE_CONTROLLER, `${ref.namespace ?? ns}/${ref.name}`);
    // Control plane node list of the Kube-OVN values (OVN-2).
    if (e.object.metadata.labels && LABEL_CONTROL_PLANE in e.object.metadata.labels) enqueueWorkload(ns, e.object.spec.clusterName ?? e.object.metadata.labels[LABEL_CLUSTER_NAME]);
  }, { shared: true });
  // Kube-OVN annotation / CIDRs (OVN-2, OVN-3), versions (KCP-3, KCP-4).
  ctx.mgmt.watch<Cluster>('Cluster', (e) => {
    if (e.type === 'DELETED') return;
    const ref = e.object.spec.infrastructureRef;
    const ns = e.object.metadata.namespace ?? 'default';
    ctx.manager.enqueue(CLUSTER_WORKLOAD_CONTROLLER, ref?.kind === 'HCSCluster' ? `${ref.namespace ?? ns}/${ref.name}` : key(e.object));
  }, { shared: true });
  ctx.mgmt.watch<KubeadmControlPlane>('KubeadmControlPlane', (e) => {
    const ns = e.object.metadata.namespace ?? 'default';
    enqueueWorkload(ns, e.object.metadata.labels?.[LABEL_CLUSTER_NAME] ?? e.object.metadata.ownerReferences?.find((r) => r.kind === 'Cluster')?.name);
    void ctx.mgmt.list<Cluster>('Cluster', { namespace: ns }).then((cs) => {
      for (const c of cs) if (c.spec.controlPlaneRef?.name === e.object.metadata.name) enqueueWorkload(ns, c.metadata.name);
    });
  }, { shared: true });
  ctx.mgmt.watch<MachineDeployment>('MachineDeployment', (e) => enqueueWorkload(e.object.metadata.namespace ?? 'default', e.object.spec.clusterName), { shared: true });
  ctx.mgmt.watch('HCSMachineTemplate', (e) => {
    // A (re-)created or changed template: re-check every cluster of the namespace.
    const ns = e.object.metadata.namespace ?? 'default';
    void ctx.mgmt.list<HCSCluster>('HCSCluster', { namespace: ns }).then((hcs) => {
      for (const hc of hcs) ctx.manager.enqueue(CLUSTER_WORKLOAD_CONTROLLER, key(hc));
    });
  }, { shared: true });

  const resyncAll = async (): Promise<void> => {
    for (const [kind, ctl] of [
      ['HCSCluster', CLUSTER_CONTROLLER],
      ['HCSCluster', CLUSTER_WORKLOAD_CONTROLLER],
      ['HCSMachineConfigPool', POOL_CONTROLLER],
      ['HCSMachine', MACHINE_CONTROLLER],
    ] as const) {
      for (const o of await ctx.mgmt.list(kind)) ctx.manager.enqueue(ctl, key(o));
    }
  };
  // Resync objects that existed before the watches (e.g. after a provider restart).
  void resyncAll();

  const names = Object.values(slots).map((s) => s.name);
  const handle: ProviderControllers = {
    ...first,
    names,
    crash() {
      for (const n of names) ctx.manager.crash(n);
    },
    async restart() {
      const fresh = build();
      slots.cluster.impl = fresh.cluster;
      slots.pool.impl = fresh.pool;
      slots.machine.impl = fresh.machine;
      slots.workload.impl = fresh.workload;
      Object.assign(handle, fresh);
      clusterChanged.reset();
      machineChanged.reset();
      poolSpecChanged.reset();
      for (const n of names) ctx.manager.restart(n, []);
      await resyncAll();
    },
  };
  return handle;
}
