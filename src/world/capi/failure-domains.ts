/**
 * Failure domain choices of the KubeadmControlPlane, as cluster-api v1.10
 * util/failuredomains/failure_domains.go (read, not copied): countByFailureDomain,
 * PickMost (scale down: the failure domain with the most eligible machines,
 * then the most machines) and PickFewest (scale up: the fewest up-to-date
 * machines not being deleted, then the fewest machines). Only the Cluster's
 * control plane failure domains count; a machine in another (or none) is not
 * counted. Upstream breaks the remaining ties in map order (random); the
 * model breaks them by name, so a run stays a function of its seed.
 */

/** What the choices read of a control plane Machine. */
export interface FdMachine {
  failureDomain?: string;
  upToDate: boolean;
  deleting: boolean;
}

interface FailureDomainCount {
  id: string;
  /** Machines of the priority set (eligible for deletion; up to date for placement) in the failure domain. */
  priority: number;
  all: number;
}

/** util/failuredomains countByFailureDomain: per control plane failure domain, the priority machines and all machines in it. */
function countByFailureDomain(fds: readonly string[], all: readonly FdMachine[], priority: readonly FdMachine[]): FailureDomainCount[] {
  return fds.map((id) => ({ id, priority: priority.filter((m) => m.failureDomain === id).length, all: all.filter((m) => m.failureDomain === id).length }));
}

const byId = (a: FailureDomainCount, b: FailureDomainCount): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * util/failuredomains PickMost: the failure domain with the most eligible machines, then the most machines, with at
 * least one eligible machine. Upstream breaks the remaining ties in map order (random); the model by name.
 */
export function pickMostFailureDomain(fds: readonly string[], all: readonly FdMachine[], eligible: readonly FdMachine[]): string | undefined {
  const agg = countByFailureDomain(fds, all, eligible).filter((f) => f.priority > 0);
  return agg.sort((a, b) => b.priority - a.priority || b.all - a.all || byId(a, b))[0]?.id;
}

/**
 * util/failuredomains PickFewest (ControlPlane.NextFailureDomainForScaleUp): the failure domain with the fewest
 * up-to-date machines not being deleted, then the fewest machines; ties by name (upstream: map order).
 */
export function pickFewestFailureDomain(fds: readonly string[], all: readonly FdMachine[]): string | undefined {
  const agg = countByFailureDomain(fds, all, all.filter((m) => m.upToDate && !m.deleting));
  return agg.sort((a, b) => a.priority - b.priority || a.all - b.all || byId(a, b))[0]?.id;
}
