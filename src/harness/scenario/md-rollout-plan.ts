/**
 * MD-1: a rolling MachineDeployment scales its old MachineSets down no
 * faster than upstream's rolling-update plan allows (issue 22).
 *
 * Upstream cluster-api v1.10, internal/controllers/machinedeployment/
 * machinedeployment_rolling.go reconcileOldMachineSets (read, not copied):
 * in one reconcile, with minAvailable = replicas − maxUnavailable,
 * - maxScaledDown = Σ spec.replicas (after reconcileNewMachineSet) −
 *   minAvailable − (the new MachineSet's spec.replicas − its
 *   status.availableReplicas); nothing goes when it is ≤ 0;
 * - cleanupUnhealthyReplicas removes at most maxScaledDown of the old
 *   MachineSets' unavailable replicas (spec − available of each);
 * - scaleDownOldMachineSetsForRollingUpdate removes at most
 *   Σ status.availableReplicas − minAvailable.
 * So one reconcile lowers the old MachineSets' Σ spec.replicas by at most
 * min(maxScaledDown, Σ unavailable old replicas) + max(0, Σ available −
 * minAvailable). Removing unhealthy machines does not lower the available
 * count, so the MD-1 availability bound alone cannot see a cleanup that
 * ignores maxUnavailable: this check compares the MachineSets' spec.replicas
 * with that plan.
 *
 * Read from the objects only, through a watch (every version, in order):
 * MachineDeployments (replicas, strategy, paused) and their MachineSets
 * (owner, `machinedeployment.clusters.x-k8s.io/revision`, spec.replicas,
 * status.availableReplicas). The MachineSet with the highest revision is
 * the new one (upstream getNewMachineSet gives it max old revision + 1 before
 * it scales any old one). The decreases of the old MachineSets since the last
 * MachineSet status write of the deployment form one decision (upstream
 * computes it from the statuses it read; a controller may write one
 * MachineSet once or several times per reconcile): their sum is held to the
 * bound computed from the MachineSets as they were when the first of them
 * was written. Paused, OnDelete and deleting MachineDeployments, and
 * MachineSets being deleted, are not judged.
 */
import type { MachineDeployment, MachineSet } from '../../product/api/capi.js';
import { maxUnavailable } from '../../world/capi/mdutil.js';
import type { KubeClient } from '../../core/kube/client.js';
import type { WatchEvent } from '../../core/kube/types.js';
import type { ContractFinding } from './disk-reuse.js';

const ANN_REVISION = 'machinedeployment.clusters.x-k8s.io/revision';

interface MsView {
  name: string;
  revision: number;
  spec: number;
  available: number;
  /** JSON of the status: a change ends a decision. */
  status: string;
  deleting: boolean;
}

/** One decision in progress: the bound, and what it has taken so far. */
interface Decision {
  bound: number;
  taken: number;
  why: string;
  before: string;
}

export interface OldScaleDownState {
  replicas: number;
  maxUnavailable: number;
  /** Every MachineSet of the deployment not being deleted; the one with the highest revision is the new one. */
  machineSets: { name: string; revision: number; spec: number; available: number }[];
}

/** The most upstream's rolloutRolling removes from the old MachineSets' spec.replicas in one reconcile from `s`, and why. */
export function oldScaleDownBound(s: OldScaleDownState): { bound: number; why: string } {
  const sorted = [...s.machineSets].sort((a, b) => b.revision - a.revision || (a.name < b.name ? -1 : 1));
  const newMS = sorted[0];
  const old = sorted.slice(1);
  if (!newMS) return { bound: 0, why: 'no MachineSet' };
  const minAvailable = s.replicas - s.maxUnavailable;
  const all = s.machineSets.reduce((n, ms) => n + ms.spec, 0);
  const newUnavailable = newMS.spec - newMS.available;
  const maxScaledDown = all - minAvailable - newUnavailable;
  const unhealthy = old.reduce((n, ms) => n + Math.max(0, ms.spec - ms.available), 0);
  const available = s.machineSets.reduce((n, ms) => n + ms.available, 0);
  const cleanup = maxScaledDown > 0 ? Math.min(maxScaledDown, unhealthy) : 0;
  const scale = maxScaledDown > 0 ? Math.max(0, available - minAvailable) : 0;
  return {
    bound: cleanup + scale,
    why: `minAvailable ${minAvailable} (replicas ${s.replicas} − maxUnavailable ${s.maxUnavailable}), Σ spec.replicas ${all}, new MachineSet ${newMS.name} unavailable ${newUnavailable}: maxScaledDown ${maxScaledDown}; cleanup of unhealthy old replicas ≤ min(maxScaledDown, ${unhealthy}) = ${cleanup}; scale down ≤ Σ available ${available} − minAvailable = ${scale}`,
  };
}

export class MdRolloutPlanTracker {
  private readonly mds = new Map<string, MachineDeployment>();
  /** MachineDeployment key → its MachineSets by name. */
  private readonly sets = new Map<string, Map<string, MsView>>();
  private readonly decisions = new Map<string, Decision>();
  private readonly pending: ContractFinding[] = [];
  private readonly stop: (() => void)[] = [];

  constructor(mgmt: KubeClient) {
    this.stop.push(mgmt.watch<MachineDeployment>('MachineDeployment', (e) => this.onDeployment(e), { shared: true }));
    this.stop.push(mgmt.watch<MachineSet>('MachineSet', (e) => this.onMachineSet(e), { shared: true }));
  }

  /** The findings since the last call. */
  findings(): ContractFinding[] {
    return this.pending.splice(0);
  }

  close(): void {
    for (const s of this.stop.splice(0)) s();
  }

  private onDeployment(e: WatchEvent<MachineDeployment>): void {
    const key = `${e.object.metadata.namespace ?? 'default'}/${e.object.metadata.name}`;
    const prev = this.mds.get(key);
    if (e.type === 'DELETED') this.mds.delete(key);
    else this.mds.set(key, e.object);
    // A new spec (replicas, strategy, template) is a new state: the next decision is judged from it.
    if (!prev || e.type === 'DELETED' || JSON.stringify(prev.spec) !== JSON.stringify(e.object.spec)) this.decisions.delete(key);
  }

  private onMachineSet(e: WatchEvent<MachineSet>): void {
    const ms = e.object;
    const owner = ms.metadata.ownerReferences?.find((o) => o.kind === 'MachineDeployment' && o.controller);
    if (!owner) return;
    const key = `${ms.metadata.namespace ?? 'default'}/${owner.name}`;
    const sets = this.sets.get(key) ?? new Map<string, MsView>();
    this.sets.set(key, sets);
    const before = sets.get(ms.metadata.name);
    if (e.type === 'DELETED') {
      sets.delete(ms.metadata.name);
      return;
    }
    const view: MsView = {
      name: ms.metadata.name,
      revision: Number(ms.metadata.annotations?.[ANN_REVISION] ?? '0') || 0,
      spec: ms.spec.replicas ?? 1,
      available: ms.status?.availableReplicas ?? 0,
      status: JSON.stringify(ms.status ?? {}),
      deleting: !!ms.metadata.deletionTimestamp,
    };
    if (before && before.status !== view.status) this.decisions.delete(key);
    if (before && view.spec < before.spec && !view.deleting) this.judge(key, sets, before, view);
    sets.set(ms.metadata.name, view);
  }

  /** An old MachineSet's spec.replicas went from `before.spec` to `after.spec`: within the decision's bound? */
  private judge(key: string, sets: Map<string, MsView>, before: MsView, after: MsView): void {
    const md = this.mds.get(key);
    if (!md || md.metadata.deletionTimestamp || md.spec.paused || (md.spec.strategy?.type ?? 'RollingUpdate') !== 'RollingUpdate') return;
    const live = [...sets.values()].filter((s) => !s.deleting);
    const newest = live.reduce<MsView | undefined>((b, s) => (!b || s.revision > b.revision || (s.revision === b.revision && s.name < b.name) ? s : b), undefined);
    if (!newest || newest.name === before.name) return; // the new MachineSet (reconcileNewMachineSet may lower it to replicas)
    let d = this.decisions.get(key);
    if (!d) {
      const { bound, why } = oldScaleDownBound({ replicas: md.spec.replicas ?? 1, maxUnavailable: maxUnavailable(md), machineSets: live });
      d = { bound, taken: 0, why, before: live.map((s) => `${s.name} ${s.spec} (${s.available} available)`).join(', ') };
      this.decisions.set(key, d);
    }
    d.taken += before.spec - after.spec;
    if (d.taken > d.bound) {
      this.pending.push({
        rule: 'MD-1',
        key: `MD-1/old-scale-down/${key}/${after.name}/${after.spec}`,
        message: `MachineDeployment ${key} scaled its old MachineSet ${after.name} down ${before.spec} -> ${after.spec}: ${d.taken} old replica(s) removed in one decision, but upstream's rolling update removes at most ${d.bound} (${d.why}; cluster-api v1.10 machinedeployment_rolling.go reconcileOldMachineSets); MachineSets were ${d.before}`,
        refs: [md.metadata.name, after.name],
      });
    }
  }
}
