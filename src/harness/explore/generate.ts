/**
 * Random schedules drawn from what a scenario exercises (its baseline
 * Profile): faults on the cloud operations it called, at a call number it
 * reached; crashes of the controllers that reconciled, right after an event
 * its log holds. Only faults the system is meant to ride out are drawn — a
 * transient 500, a call carried out whose answer is lost (`partial`), a
 * slower job or response, and on `detachVolume` a detach that times out
 * (`timeout`: the job stays RUNNING, then ends FAIL with the volume still
 * in-use, as ECS reports a detach it gave up; the provider reports
 * DiskDetachFailed and detaches again, DISK-9, bug report 2) — so a failure
 * points at the system, not at a cloud that never recovers (no `stuck`, no
 * quota or capacity exhaustion, no `jobFail` or `timeout` of a create or
 * delete, which Cluster API treats as terminal).
 */
import { JOB_OPERATIONS } from '../../../mock-hcs/src/faults.js';
import type { Rng } from '../../core/rng.js';
import type { Profile } from './run-one.js';
import type { ScheduleItem } from './schedule.js';

export interface GenerateOptions {
  /** Most items in one schedule (default 4). */
  maxItems?: number;
  /** Share of crash items (default 0.5). */
  crashShare?: number;
  /**
   * Also draw the adversarial cloud of issue 37 (default off, so the draws of existing explorations stay as they
   * were): API Gateway flow control on any operation (`throttle`, 429 APIGW.0308, a bucket of one call a second)
   * and read-after-write lag of server lists (`listLag` on listServers).
   */
  adversarial?: boolean;
}

/** Short outages more often: a restart that lands while a cloud operation is still in flight. */
const DOWN_FOR_MS = [0, 0, 1_000, 3_000, 10_000, 30_000];
const GROUPS = ['provider', 'capi', 'all'];
/** How long a timed-out detach stays RUNNING before its job ends FAIL. */
const DETACH_TIMEOUT_MS = [30_000, 120_000];
/**
 * Anchor weights: right after the cloud accepted a mutating call (the
 * operation is in flight, the controller holds its outcome in memory) is
 * where crash bugs live; then the provider's and Cluster API's own decisions.
 */
const IN_FLIGHT = /\.(created|attach-requested|detach-requested|delete-requested|deleting)$/;
function anchorWeight(a: { source: string; type: string }): number {
  if (a.source === 'cloud') return IN_FLIGHT.test(a.type) ? 4 : 1;
  return ({ provider: 2, capi: 1, guest: 1, workload: 0.5, kube: 0.1 } as Record<string, number>)[a.source] ?? 0;
}

function pick<T>(rng: Rng, xs: readonly T[]): T {
  return xs[rng.int(xs.length)]!;
}

function weighted<T>(rng: Rng, xs: readonly T[], w: (x: T) => number): T {
  const total = xs.reduce((s, x) => s + w(x), 0);
  let r = rng.next() * total;
  for (const x of xs) {
    r -= w(x);
    if (r < 0) return x;
  }
  return xs[xs.length - 1]!;
}

function faultItem(rng: Rng, p: Profile, adversarial = false): ScheduleItem | undefined {
  if (p.calls.length === 0) return undefined;
  const c = pick(rng, p.calls);
  const job = JOB_OPERATIONS.has(c.operation);
  const code = c.service === 'evs' ? 'EVS.0001' : c.service === 'vpc' ? 'VPC.0001' : c.service === 'ims' ? 'IMS.0001' : c.service === 'iam' ? 'IAM.0001' : 'Ecs.0002';
  const menu: Record<string, unknown>[] = [
    { type: 'error', status: 500, code, message: 'explore: transient internal error' },
    ...(job ? [{ type: 'partial' }, { type: 'latency', ms: pick(rng, [5_000, 30_000, 120_000]), mode: 'job' }] : [{ type: 'latency', ms: pick(rng, [1_000, 10_000, 60_000]), mode: 'response' }]),
  ];
  // Only for detaches (see above); drawn last so the other operations' draws are unchanged.
  if (c.operation === 'detachVolume') menu.push({ type: 'timeout', ms: pick(rng, DETACH_TIMEOUT_MS), failReason: 'explore: the detach timed out' });
  if (adversarial) {
    menu.push({ type: 'throttle', perSecond: 1, burst: 1 });
    if (c.operation === 'listServers') menu.push({ type: 'listLag', ms: pick(rng, [30_000, 180_000]) });
  }
  const effect = pick(rng, menu);
  // A throttle or a lag is a condition of the cloud for a while, not one failed call: no count.
  const lasting = effect.type === 'throttle' || effect.type === 'listLag';
  return { kind: 'fault', rule: { service: c.service, operation: c.operation, effect, after: rng.int(c.count), ...(lasting ? {} : { count: 1 }) } };
}

function crashItem(rng: Rng, p: Profile): ScheduleItem | undefined {
  const anchors = p.anchors.filter((a) => anchorWeight(a) > 0);
  if (anchors.length === 0 || p.controllers.length === 0) return undefined;
  const a = weighted(rng, anchors, anchorWeight);
  const controllers = rng.next() < 0.5 ? [pick(rng, GROUPS)] : [pick(rng, p.controllers)];
  return { kind: 'crash', controllers, downForMs: pick(rng, DOWN_FOR_MS), on: { source: a.source, type: a.type, nth: 1 + rng.int(a.count) } };
}

/** A schedule of 1..maxItems items. */
export function generateSchedule(rng: Rng, p: Profile, o: GenerateOptions = {}): ScheduleItem[] {
  const n = 1 + rng.int(o.maxItems ?? 4);
  const out: ScheduleItem[] = [];
  for (let i = 0; i < n; i++) {
    const it = rng.next() < (o.crashShare ?? 0.5) ? crashItem(rng, p) ?? faultItem(rng, p, o.adversarial) : faultItem(rng, p, o.adversarial) ?? crashItem(rng, p);
    if (it) out.push(it);
  }
  return out;
}
