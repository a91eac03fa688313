/**
 * The HCS infrastructure provider: HCSCluster, HCSMachineConfigPool and
 * HCSMachine controllers (see docs/provider.md).
 */
import type { Machine } from '../api/capi.js';
import type { HCSMachine, HCSMachineConfigPool } from '../api/hcs.js';
import type { HcsClient } from '../cloud/index.js';
import type { KubeObject, WatchEvent } from '../kube/types.js';
import type { ControllerContext } from '../runtime/context.js';
import type { CloudApi } from './cloud-api.js';
import { EvsDiskClaimer, type DiskClaimer } from './disks.js';
import { CLUSTER_CONTROLLER, HCSClusterController } from './hcscluster.js';
import { HCSMachineController, MACHINE_CONTROLLER } from './hcsmachine.js';
import { POOL_CONTROLLER, PoolController, enqueuePoolRefresh } from './pool.js';

export type { CloudApi } from './cloud-api.js';
export { EvsDiskClaimer, type DiskClaimer, type DiskIdentity, type DiskRequest, type ClaimedDisk } from './disks.js';
export {
  injectCloudInit,
  parseCloudConfig,
  patchJoinConfiguration,
  JOIN_CONFIG_PATH,
  KUBELET_CERT_PATH,
  KUBELET_KEY_PATH,
  type CloudConfigDoc,
  type Injection,
} from './cloudinit.js';
export * from './labels.js';
export { HCSClusterController, CLUSTER_CONTROLLER, resolveSubnets } from './hcscluster.js';
export {
  HCSMachineController,
  MACHINE_CONTROLLER,
  META_IMAGE_NAME,
  META_IMAGE_K8S_VERSION,
  COND_POOL,
  COND_DISKS,
  COND_INSTANCE,
  COND_READY,
  clientTokenFor,
} from './hcsmachine.js';
export { PoolController, POOL_CONTROLLER, POOL_REFRESH_MS, bindEntry, releaseEntry, syncEntries } from './pool.js';

export interface ProviderOptions {
  /** The cloud (one project for now). Any object with the CloudApi methods works (tests). */
  cloud: HcsClient | CloudApi;
  /** Injectable: tests swap in a broken one to prove scenarios can fail. */
  diskClaimer?: DiskClaimer;
}

export interface ProviderControllers {
  cluster: HCSClusterController;
  pool: PoolController;
  machine: HCSMachineController;
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
function changedPredicate(): (e: WatchEvent) => boolean {
  const seen = new Map<string, string>();
  return (e) => {
    const k = key(e.object);
    if (e.type === 'DELETED') {
      seen.delete(k);
      return true;
    }
    const m = e.object.metadata;
    const sig = JSON.stringify([m.uid, m.generation, m.deletionTimestamp, m.finalizers, m.ownerReferences, m.labels, m.annotations]);
    if (seen.get(k) === sig) return false;
    seen.set(k, sig);
    return true;
  };
}

/** Register the provider's controllers and their watches on ctx.manager / ctx.mgmt. */
export function setupProviderControllers(ctx: ControllerContext, opts: ProviderOptions): ProviderControllers {
  // HcsClient's wire types are richer than CloudApi's; both are structurally compatible.
  const cloud: CloudApi = opts.cloud;
  const disks = opts.diskClaimer ?? new EvsDiskClaimer(cloud);
  const cluster = new HCSClusterController(ctx, cloud);
  const pool = new PoolController(ctx, cloud);
  const machine = new HCSMachineController(ctx, cloud, disks);
  ctx.manager.register(cluster);
  ctx.manager.register(pool);
  ctx.manager.register(machine);

  const clusterChanged = changedPredicate();
  const machineChanged = changedPredicate();
  ctx.mgmt.watch('HCSCluster', (e) => {
    if (clusterChanged(e)) ctx.manager.enqueue(CLUSTER_CONTROLLER, key(e.object));
  });
  const poolSpecChanged = changedPredicate();
  ctx.mgmt.watch<HCSMachineConfigPool>('HCSMachineConfigPool', (e: WatchEvent<HCSMachineConfigPool>) => {
    const k = key(e.object);
    if (e.type !== 'DELETED') enqueuePoolRefresh(ctx, e.object.metadata.namespace ?? 'default', e.object.metadata.name);
    for (const m of machine.takeWaiting(k)) ctx.manager.enqueue(MACHINE_CONTROLLER, m);
    // A spec edit (e.g. an appended persistent disk, DISK-6) concerns the machines bound to its entries.
    if (poolSpecChanged(e) && e.type === 'MODIFIED') {
      for (const en of e.object.status?.entries ?? []) if (en.machine) ctx.manager.enqueue(MACHINE_CONTROLLER, `${e.object.metadata.namespace ?? 'default'}/${en.machine}`);
    }
  });
  ctx.mgmt.watch<HCSMachine>('HCSMachine', (e: WatchEvent<HCSMachine>) => {
    if (machineChanged(e)) ctx.manager.enqueue(MACHINE_CONTROLLER, key(e.object));
    const p = e.object.spec.configPoolRef?.name;
    if (e.type === 'DELETED' && p) enqueuePoolRefresh(ctx, e.object.metadata.namespace ?? 'default', p);
  });
  ctx.mgmt.watch<Machine>('Machine', (e: WatchEvent<Machine>) => {
    const ref = e.object.spec.infrastructureRef;
    if (ref?.kind === 'HCSMachine') ctx.manager.enqueue(MACHINE_CONTROLLER, `${ref.namespace ?? e.object.metadata.namespace ?? 'default'}/${ref.name}`);
  });

  // Resync objects that existed before the watches (e.g. after a provider restart).
  void (async () => {
    for (const [kind, ctl] of [
      ['HCSCluster', CLUSTER_CONTROLLER],
      ['HCSMachineConfigPool', POOL_CONTROLLER],
      ['HCSMachine', MACHINE_CONTROLLER],
    ] as const) {
      for (const o of await ctx.mgmt.list(kind)) ctx.manager.enqueue(ctl, key(o));
    }
  })();
  return { cluster, pool, machine };
}
