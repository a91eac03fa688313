/**
 * Which Machines a MachineSet deletes first when scaling down. Modelled on
 * cluster-api internal/controllers/machineset/machineset_delete_policy.go
 * (v1beta1 era, with the tiered priorities): deleting Machines first, then
 * Machines annotated cluster.x-k8s.io/delete-machine, then unhealthy ones
 * (no nodeRef, failureReason/Message set, NodeHealthy or
 * HealthCheckSucceeded False), then the policy's own ordering; ties are
 * broken by name so the choice is deterministic.
 */
import { ANNOTATION_DELETE_MACHINE, type DeletePolicy, type Machine } from '../../product/api/capi.js';
import { getCondition } from './util.js';

const MUST_DELETE = 100;
const SHOULD_DELETE = 75;
const BETTER_DELETE = 50;
const COULD_DELETE = 20;
const MUST_NOT_DELETE = 0;
const SECONDS_PER_TEN_DAYS = 864000;

export function isMachineHealthy(m: Machine): boolean {
  if (!m.status?.nodeRef) return false;
  if (m.status.failureReason || m.status.failureMessage) return false;
  if (getCondition(m.status.conditions, 'NodeHealthy')?.status === 'False') return false;
  if (getCondition(m.status.conditions, 'HealthCheckSucceeded')?.status === 'False') return false;
  return true;
}

function common(m: Machine): number | undefined {
  if (m.metadata.deletionTimestamp) return MUST_DELETE;
  if (m.metadata.annotations && ANNOTATION_DELETE_MACHINE in m.metadata.annotations) return SHOULD_DELETE;
  if (!isMachineHealthy(m)) return BETTER_DELETE;
  return undefined;
}

function oldest(m: Machine, nowMs: number): number {
  const c = common(m);
  if (c !== undefined) return c;
  if (!m.metadata.creationTimestamp) return MUST_NOT_DELETE;
  const ageS = (nowMs - Date.parse(m.metadata.creationTimestamp)) / 1000;
  if (ageS < 0) return MUST_NOT_DELETE;
  return BETTER_DELETE * (1 - Math.exp(-ageS / SECONDS_PER_TEN_DAYS));
}

export function deletePriority(policy: DeletePolicy | undefined, m: Machine, nowMs: number): number {
  switch (policy ?? 'Random') {
    case 'Oldest':
      return oldest(m, nowMs);
    case 'Newest': {
      const c = common(m);
      return c !== undefined ? c : BETTER_DELETE - oldest(m, nowMs);
    }
    case 'Random': {
      const c = common(m);
      return c !== undefined ? c : COULD_DELETE;
    }
    default:
      throw new Error(`Unsupported delete policy ${String(policy)}. Must be one of 'Random', 'Newest', or 'Oldest'`);
  }
}

/**
 * Random-policy priorities per stored Machine version: they depend on the
 * Machine alone (no clock), and a frozen stored version never changes.
 */
const randomPriority = new WeakMap<object, number>();

function priorityOf(policy: DeletePolicy | undefined, m: Machine, nowMs: number): number {
  if ((policy ?? 'Random') !== 'Random' || !Object.isFrozen(m)) return deletePriority(policy, m, nowMs);
  let p = randomPriority.get(m);
  if (p === undefined) randomPriority.set(m, (p = deletePriority(policy, m, nowMs)));
  return p;
}

/**
 * getMachinesToDeletePrioritized: the `diff` Machines to delete, highest
 * priority first, name as tie-break. The order is total (names are unique in
 * a namespace), so keeping the `diff` best while scanning (binary insertion
 * into a short sorted list) gives exactly the first `diff` of the fully
 * sorted list, in O(n log diff) instead of sorting all n.
 */
export function machinesToDelete(machines: Machine[], diff: number, policy: DeletePolicy | undefined, nowMs: number): Machine[] {
  if (diff <= 0) return [];
  if (diff >= machines.length) return [...machines];
  type Scored = { m: Machine; p: number };
  const before = (a: Scored, b: Scored): boolean => (a.p === b.p ? a.m.metadata.name < b.m.metadata.name : a.p > b.p);
  const top: Scored[] = [];
  for (const m of machines) {
    const x = { m, p: priorityOf(policy, m, nowMs) };
    if (top.length === diff && !before(x, top[diff - 1]!)) continue;
    let lo = 0;
    let hi = top.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(top[mid]!, x)) lo = mid + 1;
      else hi = mid;
    }
    top.splice(lo, 0, x);
    if (top.length > diff) top.pop();
  }
  return top.map((x) => x.m);
}
