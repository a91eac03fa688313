/**
 * Which Machines a MachineSet deletes first when scaling down. Modelled on
 * cluster-api internal/controllers/machineset/machineset_delete_policy.go
 * (v1beta1 era, with the tiered priorities): deleting Machines first, then
 * Machines annotated cluster.x-k8s.io/delete-machine, then unhealthy ones
 * (no nodeRef, failureReason/Message set, NodeHealthy or
 * HealthCheckSucceeded False), then the policy's own ordering; ties are
 * broken by name so the choice is deterministic.
 */
import { ANNOTATION_DELETE_MACHINE, type DeletePolicy, type Machine } from '../api/capi.js';
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

/** getMachinesToDeletePrioritized: the `diff` Machines to delete, highest priority first, name as tie-break. */
export function machinesToDelete(machines: Machine[], diff: number, policy: DeletePolicy | undefined, nowMs: number): Machine[] {
  if (diff <= 0) return [];
  if (diff >= machines.length) return [...machines];
  const scored = machines.map((m) => ({ m, p: deletePriority(policy, m, nowMs) }));
  scored.sort((a, b) => (a.p === b.p ? (a.m.metadata.name < b.m.metadata.name ? -1 : a.m.metadata.name > b.m.metadata.name ? 1 : 0) : b.p - a.p));
  return scored.slice(0, diff).map((x) => x.m);
}
