/**
 * The MachineDeployment rollout decisions as a pure function: given the
 * deployment's replicas and strategy and, for every MachineSet, its
 * spec.replicas, status.replicas and status.availableReplicas, it returns the
 * scale decision ("scale intent") for each MachineSet. The controller
 * (machinedeployment.ts) applies the intents; table tests replay upstream's
 * unit tables with it (test/capi/planner.test.ts).
 *
 * Behaviour follows cluster-api v1.10.10, the version tools/capi builds
 * (kubernetes-sigs/cluster-api, read, not copied; docs/capi.md "Upstream
 * version followed"):
 * - internal/controllers/machinedeployment/machinedeployment_rolling.go
 *   rolloutRolling → reconcileNewMachineSet, then reconcileOldMachineSets
 *   (cleanupUnhealthyReplicas, then scaleDownOldMachineSetsForRollingUpdate).
 *   Each step sees the spec.replicas the previous one set (upstream's
 *   scaleMachineSet writes the new value into the object it was given).
 *   There is no deadlock breaker and no pending-deletion bookkeeping: both
 *   came with the v1.12 rollout planner (machinedeployment_rollout_planner.go).
 * - internal/controllers/machinedeployment/machinedeployment_rollout_ondelete.go
 *   rolloutOnDelete → reconcileNewMachineSetOnDelete, reconcileOldMachineSetsOnDelete,
 *   over the old MachineSets in the order the caller gives (upstream:
 *   FindOldMachineSets keeps mdutil.FindNewMachineSet's sort, decreasing
 *   spec.replicas, then oldest, then name; see byDecreasingReplicas).
 * - internal/controllers/machinedeployment/mdutil/util.go: ResolveFenceposts,
 *   MaxSurge, MaxUnavailable, NewMSNewReplicas, TotalMachineSetsReplicaSum,
 *   MachineSetsByCreationTimestamp, MachineSetsByDecreasingReplicas.
 */
import { resolveFenceposts, scaledValue } from '../../product/api/rolling-update.js';
export { resolveFenceposts } from '../../product/api/rolling-update.js';
import type { IntOrString } from './util.js';

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
  /**
   * OnDelete only: the Machines matching the MachineSet's selector that are
   * not being deleted (upstream lists them in reconcileOldMachineSetsOnDelete).
   * Defaults to statusReplicas.
   */
  liveMachines?: number;
  /** The `machinedeployment.clusters.x-k8s.io/max-replicas` annotation, when set and an integer (getMachineSetFraction). */
  maxReplicasAnnotation?: number;
  /** The `machinedeployment.clusters.x-k8s.io/desired-replicas` annotation, when set and an integer (IsSaturated). */
  desiredReplicasAnnotation?: number;
}

export interface RolloutPlan {
  md: RolloutDeployment;
  newMS: RolloutMachineSet;
  oldMSs: RolloutMachineSet[];
  /** MachineSet name → new spec.replicas. Only MachineSets whose replicas change are listed. */
  scaleIntents: Record<string, number>;
  /** One line per decision. */
  notes: string[];
}

/** An impossible scale request upstream refuses with an error (the reconcile fails and is retried). */
export class InvalidScaleError extends Error {}


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
  // The raw maxSurge value (not the fencepost-resolved one), as upstream.
  const maxTotal = md.replicas + scaledValue(md.maxSurge ?? 0, md.replicas, true);
  if (current >= maxTotal) return newMSReplicas;
  return newMSReplicas + Math.min(maxTotal - current, md.replicas - newMSReplicas);
}

function compareNames(a: RolloutMachineSet, b: RolloutMachineSet): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** mdutil.MachineSetsByCreationTimestamp: oldest first, name as tie-break. */
export function byCreation(a: RolloutMachineSet, b: RolloutMachineSet): number {
  if (a.created !== b.created) return a.created - b.created;
  return compareNames(a, b);
}

/** mdutil.MachineSetsByDecreasingReplicas: most spec.replicas first, then oldest, then name. */
export function byDecreasingReplicas(a: RolloutMachineSet, b: RolloutMachineSet): number {
  if (a.specReplicas !== b.specReplicas) return b.specReplicas - a.specReplicas;
  return byCreation(a, b);
}

export function newPlan(md: RolloutDeployment, newMS: RolloutMachineSet, oldMSs: RolloutMachineSet[], scaleIntents: Record<string, number> = {}): RolloutPlan {
  return { md, newMS, oldMSs: [...oldMSs], scaleIntents: { ...scaleIntents }, notes: [] };
}

/** spec.replicas as the steps so far left it. */
function current(p: RolloutPlan, ms: RolloutMachineSet): number {
  return p.scaleIntents[ms.name] ?? ms.specReplicas;
}

/** The MachineSet as the steps so far left it (for the sums over spec.replicas). */
function withIntent(p: RolloutPlan, ms: RolloutMachineSet): RolloutMachineSet {
  return { ...ms, specReplicas: current(p, ms) };
}

/** scaleMachineSet: record the new spec.replicas (no entry when it does not change). */
function scale(p: RolloutPlan, ms: RolloutMachineSet, to: number, why: string): void {
  const from = current(p, ms);
  if (to === from) return;
  if (to === ms.specReplicas) delete p.scaleIntents[ms.name];
  else p.scaleIntents[ms.name] = to;
  p.notes.push(`Scaled MachineSet ${ms.name}: ${from} -> ${to} (${why})`);
}

/** reconcileNewMachineSet: scale the new MachineSet down to spec.replicas at once, or up within maxSurge. */
export function reconcileNewMachineSet(p: RolloutPlan): void {
  const want = p.md.replicas;
  const have = current(p, p.newMS);
  if (have === want) return;
  if (have > want) {
    scale(p, p.newMS, want, 'new MachineSet above the deployment replicas');
    return;
  }
  const all = [...p.oldMSs, p.newMS].map((ms) => withIntent(p, ms));
  scale(p, p.newMS, newMSNewReplicas(p.md, all, have), 'new MachineSet scale up');
}

/**
 * reconcileOldMachineSets (rolling): at most Σ spec − minAvailable − the new
 * MachineSet's unavailable replicas (spec − available) may go; first the old
 * MachineSets' unavailable replicas (cleanupUnhealthyReplicas), then, while
 * the available Machines of all MachineSets exceed minAvailable, any
 * (scaleDownOldMachineSetsForRollingUpdate); oldest MachineSet first.
 */
export function reconcileOldMachineSetsRollingUpdate(p: RolloutPlan): void {
  if (p.oldMSs.reduce((n, ms) => n + current(p, ms), 0) === 0) return;
  const allCount = [...p.oldMSs, p.newMS].reduce((n, ms) => n + current(p, ms), 0);
  const minAvailable = p.md.replicas - mdMaxUnavailable(p.md);
  const newUnavailable = current(p, p.newMS) - p.newMS.availableReplicas;
  const maxScaledDown = allCount - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return;
  cleanupUnhealthyReplicas(p, maxScaledDown);
  scaleDownOldMachineSetsForRollingUpdate(p);
}

/** cleanupUnhealthyReplicas: remove the old MachineSets' unavailable replicas (spec − available), oldest first, up to maxCleanup. */
export function cleanupUnhealthyReplicas(p: RolloutPlan, maxCleanup: number): number {
  p.oldMSs.sort(byCreation);
  let total = 0;
  for (const ms of p.oldMSs) {
    if (total >= maxCleanup) break;
    const replicas = current(p, ms);
    if (replicas === 0 || replicas === ms.availableReplicas) continue;
    const n = Math.min(maxCleanup - total, replicas - ms.availableReplicas);
    const next = replicas - n;
    // More available Machines than spec.replicas (a scale-down still in progress) makes this a scale up: upstream refuses it.
    if (next > replicas) throw new InvalidScaleError(`when cleaning up unhealthy replicas, got invalid request to scale down ${ms.name}: ${replicas} -> ${next}`);
    scale(p, ms, next, 'cleanup of unhealthy replicas');
    total += n;
  }
  return total;
}

/** scaleDownOldMachineSetsForRollingUpdate: while Σ available > minAvailable, take the difference from the old MachineSets, oldest first. */
export function scaleDownOldMachineSetsForRollingUpdate(p: RolloutPlan): number {
  const minAvailable = p.md.replicas - mdMaxUnavailable(p.md);
  const available = [...p.oldMSs, p.newMS].reduce((n, ms) => n + ms.availableReplicas, 0);
  if (available <= minAvailable) return 0;
  p.oldMSs.sort(byCreation);
  const want = available - minAvailable;
  let total = 0;
  for (const ms of p.oldMSs) {
    if (total >= want) break;
    const replicas = current(p, ms);
    if (replicas === 0) continue;
    const n = Math.min(replicas, want - total);
    scale(p, ms, replicas - n, 'rolling update scale down');
    total += n;
  }
  return total;
}

/** rolloutRolling's scale decisions. */
export function planRollingUpdate(md: RolloutDeployment, newMS: RolloutMachineSet, oldMSs: RolloutMachineSet[]): RolloutPlan {
  const p = newPlan(md, newMS, oldMSs);
  reconcileNewMachineSet(p);
  reconcileOldMachineSetsRollingUpdate(p);
  return p;
}

/**
 * reconcileOldMachineSetsOnDelete: first align each old MachineSet to the
 * Machines it still has that are not being deleted (the user deletes
 * Machines), counting that towards the surplus Σ spec − replicas; then take
 * what surplus is left from the old MachineSets, in the given order.
 */
export function reconcileOldMachineSetsOnDelete(p: RolloutPlan): void {
  let surplus = [...p.oldMSs, p.newMS].reduce((n, ms) => n + current(p, ms), 0) - p.md.replicas;
  for (const ms of p.oldMSs) {
    const replicas = current(p, ms);
    if (replicas <= 0) continue;
    const live = ms.liveMachines ?? ms.statusReplicas;
    surplus -= replicas - live;
    scale(p, ms, live, 'align to the Machines not being deleted');
  }
  for (const ms of p.oldMSs) {
    if (surplus <= 0) break;
    let replicas = current(p, ms);
    if (replicas <= 0) continue;
    if (replicas >= surplus) {
      replicas -= surplus;
      surplus = 0;
    } else {
      surplus -= replicas;
      replicas = 0;
    }
    scale(p, ms, replicas, 'align to the deployment replicas');
  }
}

/** rolloutOnDelete's scale decisions. */
export function planOnDelete(md: RolloutDeployment, newMS: RolloutMachineSet, oldMSs: RolloutMachineSet[]): RolloutPlan {
  const p = newPlan(md, newMS, oldMSs);
  reconcileNewMachineSet(p);
  reconcileOldMachineSetsOnDelete(p);
  return p;
}

// ---- a paused MachineDeployment: sync() -> scale() ---------------------------

/** One scaleMachineSet call: spec.replicas to `to` and the desired / max replicas annotations refreshed. */
export interface ScaleCall {
  name: string;
  from: number;
  to: number;
}

export interface PausedScalePlan {
  /** In upstream's order. A call whose replicas do not change still refreshes the replicas annotations. */
  calls: ScaleCall[];
  notes: string[];
}

/** Go's math.Round (half away from zero) to an integer. */
function roundHalfAway(x: number): number {
  return Math.sign(x) * Math.round(Math.abs(x));
}

/**
 * mdutil getMachineSetFraction: the share of the deployment's new size
 * (replicas + maxSurge) this MachineSet would have at the size recorded in
 * its max-replicas annotation (else the deployment's status.replicas),
 * minus its current size. Scaling to zero: its whole size, negative.
 */
export function machineSetFraction(ms: RolloutMachineSet, md: RolloutDeployment, mdStatusReplicas: number): number {
  if (md.replicas === 0) return -ms.specReplicas;
  const deploymentReplicas = md.replicas + mdMaxSurge(md);
  const annotated = ms.maxReplicasAnnotation ?? mdStatusReplicas;
  // Upstream divides by zero here (float +Inf, then an undefined int32 conversion); it never happens with the
  // annotation set by the controller itself. The model treats it as "no proportional change".
  if (annotated <= 0) return 0;
  return roundHalfAway((ms.specReplicas * deploymentReplicas) / annotated) - ms.specReplicas;
}

/** mdutil GetProportion: the fraction, capped by what is left to add (or remove). */
export function machineSetProportion(ms: RolloutMachineSet, md: RolloutDeployment, toAdd: number, added: number, mdStatusReplicas: number): number {
  if (ms.specReplicas === 0 || toAdd === 0 || toAdd === added) return 0;
  const fraction = machineSetFraction(ms, md, mdStatusReplicas);
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}

/** mdutil IsSaturated: the new MachineSet has, wants and serves exactly the deployment's replicas. */
export function isSaturated(md: RolloutDeployment, ms: RolloutMachineSet | undefined): boolean {
  if (!ms || ms.desiredReplicasAnnotation === undefined) return false;
  return ms.specReplicas === md.replicas && ms.desiredReplicasAnnotation === md.replicas && ms.availableReplicas === md.replicas;
}

/** MachineSetsBySizeNewer (scaling up: the larger first, the newer on a tie) and MachineSetsBySizeOlder (scaling down: the older on a tie); name last, for a deterministic order. */
function bySize(newerFirst: boolean): (a: RolloutMachineSet, b: RolloutMachineSet) => number {
  return (a, b) => {
    if (a.specReplicas !== b.specReplicas) return b.specReplicas - a.specReplicas;
    if (a.created !== b.created) return newerFirst ? b.created - a.created : a.created - b.created;
    return compareNames(a, b);
  };
}

/**
 * The scale decisions of a paused MachineDeployment, as cluster-api v1.10.10
 * internal/controllers/machinedeployment/machinedeployment_sync.go `scale()`
 * (reached from machinedeployment_controller.go reconcile: `if
 * md.Spec.Paused { return r.sync(...) }`), with mdutil FindOneActiveOrLatest,
 * IsSaturated, GetProportion and getMachineSetFraction:
 * 1. one active MachineSet (spec.replicas > 0), or none (then the new one,
 *    else the newest old one): it gets the deployment's replicas, unless it
 *    has them already (then nothing, not even the annotations);
 * 2. the new MachineSet saturated: every active old MachineSet to 0;
 * 3. RollingUpdate: replicas + maxSurge − Σ spec.replicas of the active
 *    MachineSets is distributed proportionally (each one's share from its
 *    max-replicas annotation), the larger MachineSets first; what rounding
 *    leaves over goes to the first; every active MachineSet gets a
 *    scaleMachineSet call (its annotations refreshed).
 * OnDelete with several active MachineSets: nothing. `newMS` is the new
 * MachineSet as getNewMachineSet left it: its annotations already carry the
 * deployment's new replicas (so its own fraction is 0).
 */
export function planPausedScale(md: RolloutDeployment, newMS: RolloutMachineSet | undefined, oldMSs: RolloutMachineSet[], mdStatusReplicas: number): PausedScalePlan {
  const out: PausedScalePlan = { calls: [], notes: [] };
  const call = (ms: RolloutMachineSet, to: number, why: string): void => {
    out.calls.push({ name: ms.name, from: ms.specReplicas, to });
    if (to !== ms.specReplicas) out.notes.push(`Scaled MachineSet ${ms.name}: ${ms.specReplicas} -> ${to} (${why})`);
  };
  const newestFirst = [...oldMSs].sort((a, b) => -byCreation(a, b));
  const active = [...newestFirst, ...(newMS ? [newMS] : [])].filter((ms) => ms.specReplicas > 0);
  const one = active.length === 1 ? active[0] : active.length === 0 ? (newMS ?? newestFirst[0]) : undefined;
  if (one) {
    if (one.specReplicas !== md.replicas) call(one, md.replicas, active.length === 1 ? 'paused: the only active MachineSet' : 'paused: no active MachineSet, the newest');
    return out;
  }
  if (active.length === 0) return out;
  if (isSaturated(md, newMS)) {
    for (const ms of newestFirst.filter((x) => x.specReplicas > 0)) call(ms, 0, 'paused: the new MachineSet is saturated');
    return out;
  }
  if (md.strategy !== 'RollingUpdate') return out;
  const total = active.reduce((n, ms) => n + ms.specReplicas, 0);
  const allowedSize = md.replicas > 0 ? md.replicas + mdMaxSurge(md) : 0;
  const toAdd = allowedSize - total;
  const ordered = toAdd > 0 ? [...active].sort(bySize(true)) : toAdd < 0 ? [...active].sort(bySize(false)) : active;
  let added = 0;
  const size = new Map<string, number>();
  for (const ms of ordered) {
    const p = toAdd !== 0 ? machineSetProportion(ms, md, toAdd, added, mdStatusReplicas) : 0;
    size.set(ms.name, ms.specReplicas + p);
    added += p;
  }
  ordered.forEach((ms, i) => {
    let to = size.get(ms.name)!;
    if (i === 0 && toAdd !== 0) to = Math.max(0, to + toAdd - added);
    call(ms, to, `paused: proportional scale of ${toAdd > 0 ? '+' : ''}${toAdd}`);
  });
  return out;
}

export function plan(md: RolloutDeployment, newMS: RolloutMachineSet, oldMSs: RolloutMachineSet[]): RolloutPlan {
  return md.strategy === 'OnDelete' ? planOnDelete(md, newMS, oldMSs) : planRollingUpdate(md, newMS, oldMSs);
}
