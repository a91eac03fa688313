/**
 * The testbed etcd's faults (KCP-5) on the etcd the facade serves to a real
 * Cluster API (`--capi upstream` / `external`: src/world/facade/etcd/members.ts
 * behind `pods/etcd-<node>/portforward`). The same fault model and the same
 * operator hint as the model's KCP (src/world/capi/etcd-faults.ts, src/world/capi/kcp.ts),
 * so a scenario reads the same on both:
 *
 * - the KubeadmControlPlane annotation `testbed.hcs/etcd-member-unhealthy`
 *   (Nodes, or Machines: mapped to their Nodes) sets the members that are
 *   down; without quorum the members still up report "etcdserver: no leader"
 *   and the real KCP's preflight checks refuse every scale operation;
 * - when quorum is lost: one Warning Event `EtcdQuorumLost` on the
 *   KubeadmControlPlane (component testbed-etcd, rule KCP-5) and the run's
 *   event `etcd.quorum-lost` (source workload);
 * - `testbed.hcs/restore-etcd-quorum: "true"`: the forced recovery
 *   (WorkloadEtcd.forceRecover: the down members come back as new members),
 *   both annotations removed, a Normal Event `EtcdQuorumRestored` and
 *   `etcd.quorum-restored`.
 */
import { LABEL_CLUSTER_NAME } from '../../../product/api/capi.js';
import type { KubeadmControlPlane, Machine } from '../../../product/api/capi.js';
import { ANN_ETCD_MEMBER_UNHEALTHY, ANN_RESTORE_ETCD_QUORUM, etcdFaultsOf, reportQuorumLost, reportQuorumRestored } from '../../../world/capi/etcd-faults.js';
import { keyFor, splitKey } from '../../../world/capi/util.js';
import type { WorkloadEtcd } from '../../../world/facade/etcd/members.js';
import type { Controller, Result } from '../../../core/runtime/manager.js';
import type { ControllerContext } from '../../../core/runtime/context.js';

export const ETCD_FAULTS_CONTROLLER = 'testbed-etcd-faults';
/** While a fault stands, look again this often (a Node going NotReady changes who is up). */
const RECHECK_MS = 15_000;

class ServedEtcdFaults implements Controller {
  readonly name = ETCD_FAULTS_CONTROLLER;
  /** KubeadmControlPlanes whose etcd has no quorum (the hint was given). */
  private readonly lost = new Set<string>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly etcdOf: (namespace: string, cluster: string) => WorkloadEtcd | undefined,
  ) {}

  async reconcile(key: string): Promise<Result | void> {
    const { namespace, name } = splitKey(key);
    const kcp = await this.ctx.mgmt.get<KubeadmControlPlane>({ kind: 'KubeadmControlPlane', namespace, name });
    if (!kcp) {
      this.lost.delete(key);
      return;
    }
    const cluster = kcp.metadata.labels?.[LABEL_CLUSTER_NAME] ?? kcp.metadata.ownerReferences?.find((r) => r.kind === 'Cluster')?.name;
    const faults = etcdFaultsOf(kcp.metadata.annotations);
    const etcd = cluster ? this.etcdOf(namespace, cluster) : undefined;
    if (!etcd) return faults.down.size || faults.restore ? { requeueAfter: RECHECK_MS } : undefined;
    if (faults.restore) {
      const recreated = etcd.forceRecover();
      await this.ctx.mgmt.patch({ kind: 'KubeadmControlPlane', namespace, name }, 'merge', { metadata: { annotations: { [ANN_RESTORE_ETCD_QUORUM]: null, [ANN_ETCD_MEMBER_UNHEALTHY]: null } } });
      this.lost.delete(key);
      await reportQuorumRestored(this.ctx, kcp, recreated);
      return;
    }
    // The annotation may name Machines: their Nodes host the members.
    const machines = await this.ctx.mgmt.list<Machine>('Machine', { namespace });
    const down = new Set<string>();
    for (const n of faults.down) down.add(machines.find((m) => m.metadata.name === n)?.status?.nodeRef?.name ?? n);
    etcd.setDown(down);
    const members = etcd.members();
    if (!etcd.quorum() && members.length > 0) {
      if (!this.lost.has(key)) {
        this.lost.add(key);
        const up = members.filter((m) => m.reachable).map((m) => m.name).sort();
        const gone = members.filter((m) => !m.reachable).map((m) => m.name).sort();
        await reportQuorumLost(this.ctx, kcp, up, gone, members.length);
      }
    } else {
      this.lost.delete(key);
    }
    if (down.size) return { requeueAfter: RECHECK_MS };
  }
}

/** Register the controller; it follows every KubeadmControlPlane. */
export function setupServedEtcdFaults(ctx: ControllerContext, etcdOf: (namespace: string, cluster: string) => WorkloadEtcd | undefined): () => void {
  ctx.manager.register(new ServedEtcdFaults(ctx, etcdOf));
  return ctx.mgmt.watch<KubeadmControlPlane>('KubeadmControlPlane', (e) => ctx.manager.enqueue(ETCD_FAULTS_CONTROLLER, keyFor(e.object)), { shared: true });
}
