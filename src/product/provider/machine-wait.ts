/**
 * What one HCSMachine reconcile carries and how it stops (hcsmachine.ts and
 * the modules it uses): the condition types, the requeue intervals, the
 * `Wait` a step throws when it cannot go on (a condition False with reason
 * and message, a requeue, maybe a Warning event or a terminal failure; OPS-2)
 * and the reconcile's mutable `Run` state.
 */
import type { Condition } from '../api/capi.js';
import type { HCSMachine, HCSMachineStatus } from '../api/hcs.js';

export const POLL_FAST = 5_000;
export const POLL = 10_000;
export const POLL_SLOW = 30_000;

/** Condition types on HCSMachine. */
export const COND_POOL = 'PoolEntryBound';
export const COND_DISKS = 'PersistentDisksReady';
export const COND_INSTANCE = 'InstanceReady';
export const COND_READY = 'Ready';

export interface Wait {
  condition: string;
  reason: string;
  message: string;
  rules?: string[];
  requeueAfter?: number;
  /** Also emit a Warning k8s Event (stuck states); only when the condition changes. */
  warn?: boolean;
  /** Terminal: set failureReason/failureMessage (CAPI marks the Machine Failed). */
  failure?: string;
  severity?: Condition['severity'];
  /** OPS-2: after this long in the same reason, report `stuck` instead (Warning event, condition reason). */
  stuckAfterMs?: number;
  stuck?: { reason: string; message: string; rules: string[] };
}

/** How long a transition may take before the machine reports it as stuck (OPS-2). */
export const STUCK_AFTER_MS = { detach: 5 * 60_000, attach: 5 * 60_000, build: 15 * 60_000 };

export class WaitSignal {
  constructor(readonly wait: Wait) {}
}

/** Mutable state of one reconcile. */
export interface Run {
  key: string;
  hm: HCSMachine;
  status: HCSMachineStatus;
  conds: Condition[];
  /**
   * The availability zone of the server and its new volumes: the Machine's spec.failureDomain (Cluster API places
   * control plane Machines over the HCSCluster's failure domains) when set, else the template's spec.availabilityZone.
   */
  az?: string;
}

/** The availability zone a machine's server and volumes go to (Run.az, else the template's). */
export function azOf(run: Pick<Run, 'hm' | 'az'>): string {
  return run.az || run.hm.spec.availabilityZone;
}

/** Stop this reconcile: `reconcile()` turns the Wait into conditions, events and a requeue. */
export function wait(w: Wait): never {
  throw new WaitSignal(w);
}
