/**
 * The MachineDeployment rollout planner as a pure function: given the
 * deployment's replicas and strategy and, for every MachineSet, its
 * spec.replicas, status.replicas and status.availableReplicas, it returns the
 * scale decision ("scale intent") for each MachineSet. The controller
 * (machinedeployment.ts) applies the intents; table tests replay upstream's
 * golden sequences with it step by step (test/capi/planner.test.ts).
 *
 * Behaviour follows cluster-api v1.12 (kubernetes-sigs/cluster-api, read, not
 * copied):
 * - internal/controllers/machinedeployment/machinedeployment_rollout_rollingupdate.go
 *   planRollingUpdate → reconcileNewMachineSet, reconcileOldMachineSetsRollingUpdate
 *   (two passes of scaleDownOldMSs: unavailable replicas first, then any),
 *   reconcileDeadlockBreaker. In-place updates (feature gate InPlaceUpdates)
 *   are not modelled: reconcileReplicasPendingAcknowledgeMove and
 *   reconcileInPlaceUpdateIntent are no-ops with the gate off.
 * - internal/controllers/machinedeployment/machinedeployment_rollout_ondelete.go
 *   planOnDelete → reconcileNewMachineSet, reconcileOldMachineSetsOnDelete.
 * - internal/controllers/machinedeployment/mdutil/util.go: ResolveFenceposts,
 *   MaxSurge, MaxUnavailable, NewMSNewReplicas, TotalMachineSetsReplicaSum,
 *   MachineSetsByCreationTimestamp.
 */
import { scaledValue, type IntOrString } from './util.js';

export type RolloutStrategyType = 'RollingUpdate' | 'OnDelete';

export interface RolloutDeployment {
  /** spec.replicas */
  replicas: number;
  strategy: RolloutStrategyType;
  maxSurge?: IntOrString;
  maxUnavailable?: IntOrString;
}

export interface RolloutMachineSet {
  name: string;
  /** creationTimestamp (ms); ties are broken by name (MachineSetsByCreationTimestamp). */
  created: number;
  /** spec.replicas */
  specReplicas: number;
  /** status.replicas: Machines that exist, including those being deleted. */
  statusReplicas: number;
  /** status.availableReplicas */
  availableReplicas: number;
}

export interface RolloutPlan {
  md: RolloutDeployment;
  newMS: RolloutMachineSet;
  oldMSs: RolloutMachineSet[];
  /** MachineSet name → new spec.replicas. Only MachineSets whose replicas must change are listed. */
  scaleIntents: Record<string, number>;
  /** One line per decision, in the words of upstream's V(5) log lines. */
  notes: string[];
}

/** mdutil.ResolveFenceposts: surge rounds up, unavailable rounds down; both zero → unavailable 1. */
export function resolveFenceposts(maxSurge: IntOrString | undefined, maxUnavailable: IntOrString | undefined, desired: number): { surge: number; unavailable: number } {
  const surge = scaledValue(maxSurge ?? 0, desired, true);
  let unavailable = scaledValue(maxUnavailable ?? 0, desired, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable };
}

/** mdutil.MaxUnavailable: 0 unless RollingUpdate with replicas > 0; capped at replicas. */
export function mdMaxUnavailable(md: RolloutDeployment): number {
  if (md.strategy !== 'RollingUpdate' || md.replicas === 0) return 0;
  return Math.min(resolveFenceposts(md.maxSurge, md.maxUnavailable, md.replicas).unavailable, md.replicas);
}

/** mdutil.MaxSurge: 0 unless RollingUpdate. */
export function mdMaxSurge(md: RolloutDeployment): number {
  if (md.strategy !== 'RollingUpdate') return 0;
  return resolveFenceposts(md.maxSurge, md.maxUnavailable, md.replicas).surge;
}

/** mdutil.TotalMachineSetsReplicaSum: Σ max(spec.replicas, status.replicas) (pending scale-ups and pending deletions both count). */
export function totalMachineSetsReplicaSum(mss: RolloutMachineSet[]): number {
  return mss.reduce((n, ms) => n + Math.max(ms.specReplicas, ms.statusReplicas), 0);
}

/** mdutil.NewMSNewReplicas. */
export function newMSNewReplicas(md: RolloutDeployment, allMSs: RolloutMachineSet[], newMSReplicas: number): number {
  const current = totalMachineSetsReplicaSum(allMSs);
  if (md.strategy === 'OnDelete') {
    if (current >= md.replicas) return newMSReplicas;
    return newMSReplicas + (md.replicas - current);
  }
  // Note: the raw maxSurge value (not the fencepost-resolved one), as upstream.
  const maxTotal = md.replicas + scaledValue(md.maxSurge ?? 0, md.replicas, true);
  if (current >= maxTotal) return newMSReplicas;
  return newMSReplicas + Math.min(maxTotal - current, md.replicas - newMSReplicas);
}

/** mdutil.MachineSetsByCreationTimestamp. */
export function byCreation(a: RolloutMachineSet, b: RolloutMachineSet): number {
  if (a.created !== b.created) return a.created - b.created;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

export function newPlan(md: RolloutDeployment, newMS: RolloutMachineSet, oldMSs: RolloutMachineSet[], scaleIntents: Record<string, number> = {}): RolloutPlan {
  return { md, newMS, oldMSs: [...oldMSs], scaleIntents: { ...scaleIntents }, notes: [] };
}

/** reconcileNewMachineSet: scale the new MachineSet down to spec.replicas at once, or up within maxSurge. */
export function reconcileNewMachineSet(p: RolloutPlan): void {
  const want = p.md.replicas;
  const have = p.newMS.specReplicas;
  if (have === want) return;
  if (have > want) {
    // Upstream does not weigh availability here (a scale-down of the MD may breach maxUnavailable; see docs/capi.md).
    p.scaleIntents[p.newMS.name] = want;
    p.notes.push(`Setting scale down intent for MachineSet ${p.newMS.name} to ${want} replicas`);
    return;
  }
  const next = newMSNewReplicas(p.md, [...p.oldMSs, p.newMS], have);
  if (next < have) {
    p.scaleIntents[p.newMS.name] = next;
    p.notes.push(`Setting scale down intent for MachineSet ${p.newMS.name} to ${next} replicas (-${have - next})`);
  } else if (next > have) {
    p.scaleIntents[p.newMS.name] = next;
    p.notes.push(`Setting scale up intent for MachineSet ${p.newMS.name} to ${next} replicas (+${next - have})`);
  }
}

/** reconcileOldMachineSetsRollingUpdate: scale old MachineSets down within the availability budget. */
export function reconcileOldMachineSetsRollingUpdate(p: RolloutPlan): void {
  const all = [...p.oldMSs, p.newMS];
  if (p.oldMSs.reduce((n, ms) => n + ms.specReplicas, 0) === 0) return;

  const minAvailable = Math.max(p.md.replicas - mdMaxUnavailable(p.md), 0);
  const totalSpecReplicas = all.reduce((n, ms) => n + ms.specReplicas, 0);
  let totalAvailable = all.reduce((n, ms) => n + ms.availableReplicas, 0);

  // Pending scale-down of existing Machines, from earlier reconciles (spec < status) and from this one (intents):
  // deleting them may cost availability, since the MachineSet controller may pick available Machines first.
  let totalPendingScaleDown = 0;
  for (const ms of all) {
    let intent = ms.specReplicas;
    const v = p.scaleIntents[ms.name];
    if (v !== undefined) intent = Math.min(intent, v);
    if (intent < ms.statusReplicas) totalPendingScaleDown += Math.max(ms.statusReplicas - intent, 0);
  }

  let totalScaleDown = Math.max(totalSpecReplicas - totalPendingScaleDown - minAvailable, 0);
  if (totalScaleDown <= 0) return;

  p.oldMSs.sort(byCreation);
  // First pass: only unavailable replicas; second pass: any replica. Both keep checking availability.
  [totalScaleDown, totalAvailable] = scaleDownOldMSs(p, totalScaleDown, totalAvailable, minAvailable, true);
  scaleDownOldMSs(p, totalScaleDown, totalAvailable, minAvailable, false);
}

function scaleDownOldMSs(p: RolloutPlan, totalScaleDown: number, totalAvailable: number, minAvailable: number, onlyUnavailable: boolean): [number, number] {
  for (const ms of p.oldMSs) {
    if (totalScaleDown <= 0) break;
    const replicas = p.scaleIntents[ms.name] ?? ms.specReplicas;
    if (replicas <= 0) continue;

    const maxScaleDown = onlyUnavailable ? Math.max(replicas - ms.availableReplicas, 0) : replicas;
    let scaleDown = Math.min(maxScaleDown, totalScaleDown);
    if (scaleDown === 0) continue;

    // Worst case: every existing Machine this deletes is an available one.
    if (ms.availableReplicas > 0) {
      const newSpec = Math.max(replicas - scaleDown, 0);
      let existingToDelete = Math.max(ms.statusReplicas - newSpec, 0);
      if (existingToDelete > 0) {
        if (totalAvailable - minAvailable < existingToDelete) {
          const maxDeletable = Math.max(totalAvailable - minAvailable, 0);
          const revisited = Math.min(ms.statusReplicas - maxDeletable, replicas);
          scaleDown = Math.max(replicas - revisited, 0);
          existingToDelete = Math.max(ms.statusReplicas - revisited, 0);
        }
        totalAvailable -= Math.min(ms.availableReplicas, existingToDelete);
      }
    }

    if (scaleDown > 0) {
      const intent = Math.max(replicas - scaleDown, 0);
      p.scaleIntents[ms.name] = intent;
      p.notes.push(`Setting scale down intent for MachineSet ${ms.name} to ${intent} replicas (-${scaleDown})`);
      totalScaleDown = Math.max(totalScaleDown - scaleDown, 0);
    }
  }
  return [totalScaleDown, totalAvailable];
}

/**
 * reconcileDeadlockBreaker: when unavailable Machines sit on old MachineSets, nothing is scaling, and the new
 * MachineSet is fully available, scale the first such old MachineSet down by one, even though that formally
 * breaches maxUnavailable (the deleted Machine is likely the unavailable one; old MachineSets are not remediated).
 */
export function reconcileDeadlockBreaker(p: RolloutPlan): void {
  const all = [...p.oldMSs, p.newMS];
  const oldActual = p.oldMSs.reduce((n, ms) => n + ms.statusReplicas, 0);
  if (oldActual === 0) return;
  if (oldActual === p.oldMSs.reduce((n, ms) => n + ms.availableReplicas, 0)) return;
  for (const ms of all) {
    if (ms.specReplicas !== ms.statusReplicas) return;
    if (p.scaleIntents[ms.name] !== undefined) return;
  }
  if (p.newMS.availableReplicas !== p.newMS.statusReplicas) return;
  for (const ms of p.oldMSs) {
    if (ms.availableReplicas === ms.statusReplicas || ms.specReplicas === 0) continue;
    const intent = Math.max(ms.specReplicas - 1, 0);
    p.scaleIntents[ms.name] = intent;
    p.notes.push(`Setting scale down intent for MachineSet ${ms.name} to ${intent} replicas (-1) to unblock rollout stuck due to unavailable Machine on oldMS`);
    return;
  }
}

/** planRollingUpdate (in-place updates off). */
export function planRollingUpdate(md: RolloutDeployment, newMS: RolloutMachineSet, oldMSs: RolloutMachineSet[]): RolloutPlan {
  const p = newPlan(md, newMS, oldMSs);
  reconcileNewMachineSet(p);
  reconcileOldMachineSetsRollingUpdate(p);
  reconcileDeadlockBreaker(p);
  return p;
}

/** reconcileOldMachineSetsOnDelete: align old MachineSets to their existing Machines, then to the deployment's replicas. */
export function reconcileOldMachineSetsOnDelete(p: RolloutPlan): void {
  const oldCount = p.oldMSs.reduce((n, ms) => n + ms.specReplicas, 0);
  if (oldCount === 0) return;
  const newReplicas = p.scaleIntents[p.newMS.name] ?? p.newMS.specReplicas;
  let totalScaleDown = Math.max(oldCount + newReplicas - p.md.replicas, 0);
  p.oldMSs.sort(byCreation);
  for (const ms of p.oldMSs) {
    if (ms.specReplicas <= 0) continue;
    const n = Math.max(ms.specReplicas - ms.statusReplicas, 0);
    if (n > 0) {
      const intent = Math.max(ms.specReplicas - n, 0);
      p.scaleIntents[ms.name] = intent;
      p.notes.push(`Setting scale down intent for MachineSet ${ms.name} to ${intent} replicas (-${n}): scale down to align to existing Machines`);
      totalScaleDown -= n;
    }
  }
  for (const ms of p.oldMSs) {
    if (totalScaleDown <= 0) break;
    const intentNow = p.scaleIntents[ms.name] ?? ms.specReplicas;
    if (intentNow <= 0) continue;
    const n = Math.min(intentNow, totalScaleDown);
    if (n > 0) {
      // Upstream computes the new intent from spec.replicas here (not from the intent of the first loop).
      const intent = Math.max(ms.specReplicas - n, 0);
      p.scaleIntents[ms.name] = intent;
      p.notes.push(`Setting scale down intent for MachineSet ${ms.name} to ${intent} replicas (-${n}): scale down to align MachineSet spec.replicas to MachineDeployment spec.replicas`);
      totalScaleDown -= n;
    }
  }
}

/** planOnDelete. */
export function planOnDelete(md: RolloutDeployment, newMS: RolloutMachineSet, oldMSs: RolloutMachineSet[]): RolloutPlan {
  const p = newPlan(md, newMS, oldMSs);
  reconcileNewMachineSet(p);
  reconcileOldMachineSetsOnDelete(p);
  return p;
}

export function plan(md: RolloutDeployment, newMS: RolloutMachineSet, oldMSs: RolloutMachineSet[]): RolloutPlan {
  return md.strategy === 'OnDelete' ? planOnDelete(md, newMS, oldMSs) : planRollingUpdate(md, newMS, oldMSs);
}
