/**
 * The arithmetic of a MachineDeployment's RollingUpdate strategy, as Cluster
 * API computes it (cluster-api v1.10.10
 * internal/controllers/machinedeployment/mdutil/util.go: ResolveFenceposts,
 * MaxSurge, MaxUnavailable; k8s.io/apimachinery pkg/util/intstr for the
 * percentages). One definition for everyone who reads the strategy: the
 * Cluster API model, the provider's maxSurge guard (MD-3) and the checks.
 */
import type { IntOrString, MachineDeployment } from './capi.js';

/**
 * intstr.GetScaledValueFromIntOrPercent (k8s.io/apimachinery pkg/util/intstr,
 * as cluster-api v1.10 mdutil calls it): ints are taken as is; "N%" of
 * `total` rounds up or down as asked; any other string, a bare-digit one
 * ("1") included, is an error, not an integer.
 */
export function scaledValue(v: IntOrString | undefined, total: number, roundUp: boolean): number {
  if (v === undefined) return 0;
  if (typeof v === 'number') return v;
  if (!v.endsWith('%')) throw new Error(`invalid value for IntOrString: invalid type: string is not a percentage: ${JSON.stringify(v)}`);
  const m = /^(\d+)%$/.exec(v);
  if (!m) throw new Error(`invalid value for IntOrString: invalid value ${JSON.stringify(v)}`);
  const exact = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

export interface Fenceposts {
  surge: number;
  unavailable: number;
}

/** mdutil.ResolveFenceposts: surge rounds up, unavailable rounds down, both zero → unavailable 1. */
export function resolveFenceposts(maxSurge: number | string | undefined, maxUnavailable: number | string | undefined, desired: number): Fenceposts {
  const surge = scaledValue(maxSurge ?? 0, desired, true);
  let unavailable = scaledValue(maxUnavailable ?? 0, desired, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable };
}

function isRolling(md: MachineDeployment): boolean {
  return (md.spec.strategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
}

/** mdutil.MaxUnavailable: capped at spec.replicas; 0 when not rolling or replicas 0. */
export function maxUnavailable(md: MachineDeployment): number {
  const replicas = md.spec.replicas ?? 1;
  if (!isRolling(md) || replicas === 0) return 0;
  const ru = md.spec.strategy?.rollingUpdate;
  const { unavailable } = resolveFenceposts(ru?.maxSurge, ru?.maxUnavailable, replicas);
  return Math.min(unavailable, replicas);
}

/** mdutil.MaxSurge. */
export function maxSurge(md: MachineDeployment): number {
  if (!isRolling(md)) return 0;
  const ru = md.spec.strategy?.rollingUpdate;
  return resolveFenceposts(ru?.maxSurge, ru?.maxUnavailable, md.spec.replicas ?? 1).surge;
}

