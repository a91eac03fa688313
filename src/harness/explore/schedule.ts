/**
 * Fault and crash schedules (the `schedule:` field of a scenario; written by
 * `hcs-testbed explore`, see docs/explore.md).
 *
 * A schedule is armed on a testbed before the scenario's first step:
 *
 * - `fault` items are mock-hcs fault rules (HCS-6) added at the start, each
 *   anchored on a call count: `after: N, count: 1` fires on the (N+1)-th
 *   matching call of that operation. Rules are validated like a `fault` step's.
 * - `crash` items crash controllers right after the n-th event of a given
 *   source and type in the run's event log (e.g. the 2nd `cloud
 *   volume.attach-requested`: "the provider crashes during an attach") and
 *   restart them, with a full resync, `downFor` of virtual time later. The
 *   reconcile in flight when the event is recorded runs to its end (the
 *   process dies between two reconciles, as a controller-runtime manager
 *   that is killed after a work item); its queued and delayed work is lost.
 *
 * Both anchors are positions in the deterministic run, so a schedule replays
 * exactly: same scenario + seed + schedule → same event log.
 */
import { errorMessage } from '../../core/errors.js';
import type { LogEvent } from '../../core/events.js';
import type { TestbedHandle } from '../scenario/runner.js';
import { describeItem, durationText, type CrashItem, type ScheduleItem } from '../scenario/schedule.js';

export { ANCHOR_SOURCES, describeItem, parseSchedule, scheduleToPlain, type CrashItem, type FaultItem, type ScheduleItem } from '../scenario/schedule.js';

/**
 * Arm a schedule on a fresh testbed (before the first step). Fault rules are
 * added now; crash triggers watch the event log. Restarts use the world's
 * synchronous restart where the backend has one (embedded), so the restart's
 * resync is enqueued at the exact instant its timer fires.
 */
export function armSchedule(tb: TestbedHandle, items: readonly ScheduleItem[]): void {
  if (items.length === 0) return;
  const { world, events, clock } = tb;
  items.forEach((it, i) => {
    if (it.kind !== 'fault') return;
    world.faults.add({ ...it.rule, description: `schedule item ${i + 1}: ${describeItem(it)}` });
  });
  const crashes = items.map((it, i) => ({ it, i })).filter((x): x is { it: CrashItem; i: number } => x.it.kind === 'crash');
  if (crashes.length === 0) return;
  const seen = new Map<string, number>();
  const wanted = new Set(crashes.map((c) => `${c.it.on.source}\u0000${c.it.on.type}`));
  const onEvent = (e: LogEvent): void => {
    const k = `${e.source}\u0000${e.type}`;
    if (!wanted.has(k)) return;
    const n = (seen.get(k) ?? 0) + 1;
    seen.set(k, n);
    for (const { it, i } of crashes) {
      if (it.on.source !== e.source || it.on.type !== e.type || it.on.nth !== n) continue;
      events.record({
        source: 'scenario',
        type: 'schedule.crash',
        message: `schedule item ${i + 1}: crash ${it.controllers.join(', ')} for ${durationText(it.downForMs)} after event #${e.seq} (${e.source} ${e.type} #${n})`,
        data: { item: i + 1, afterSeq: e.seq },
      });
      let names: string[];
      try {
        names = world.crash(it.controllers);
      } catch (err) {
        events.record({ source: 'scenario', type: 'schedule.error', message: `schedule item ${i + 1}: ${errorMessage(err)}`, data: { item: i + 1 } });
        continue;
      }
      clock.setTimer(it.downForMs, () => {
        const r = world.restart(names);
        if (r) void r;
      }, `schedule item ${i + 1}: restart ${names.join(', ')}`);
    }
  };
  events.subscribe(onEvent);
}

/** RunOptions.prepare for any run of a scenario that may carry a `schedule:` (hcs-testbed run, explore): arms it. */
export function armScenarioSchedule(tb: TestbedHandle, scenario: { schedule?: readonly ScheduleItem[] }): void {
  if (scenario.schedule?.length) armSchedule(tb, scenario.schedule);
}
