/**
 * OPS-2: a stuck state is reported when it is one (issue 37: the Stuck reasons' timing, an observable no check read).
 * docs/provider.md "Stuck states": an HCSMachine waiting for a persistent disk to detach (`DetachingDisks`) reports
 * `DiskDetachStuck` after 5 minutes of that wait, one waiting for an attach (`DisksAttaching`) `DiskAttachStuck` after
 * 5 minutes, one whose server stays BUILD (`InstanceProvisioning`) `InstanceBuildStuck` after 15 minutes. A Stuck
 * reason before its time turns a normal detach, attach or build into a Warning Event and an alarm an operator acts on
 * (the documents' troubleshooting reads these reasons), so it is a finding: at every instant a condition shows a
 * Stuck reason, the wait it escalates must have been seen for at least its threshold (less a minute's tolerance for
 * when a check saw the wait begin).
 *
 * The thresholds are written here from the document, not imported from the provider (a check that read the
 * provider's constant would move with it). They are the reference provider's: findings are `reference` tier
 * (an outside provider may escalate on its own schedule). Judged only when the run has one clock: a provider in a
 * process of its own counts its waits on its wall clock (TestbedHandle.stampSkewMs).
 */
import type { HCSMachine } from '../../product/api/hcs.js';
import { listShared } from '../../core/kube/client.js';
import type { ContractFinding } from './disk-reuse.js';
import type { StateSource } from './world.js';

/** Each escalation: the wait's reason, the Stuck reason and after how long (docs/provider.md "Stuck states"). */
export const STUCK_ESCALATIONS: readonly { wait: string; stuck: string; afterMs: number }[] = [
  { wait: 'DetachingDisks', stuck: 'DiskDetachStuck', afterMs: 5 * 60_000 },
  { wait: 'DisksAttaching', stuck: 'DiskAttachStuck', afterMs: 5 * 60_000 },
  { wait: 'InstanceProvisioning', stuck: 'InstanceBuildStuck', afterMs: 15 * 60_000 },
];

/** How much sooner than its threshold a Stuck reason may show (the wait's start is when a check first saw it). */
export const STUCK_TOLERANCE_MS = 60_000;

const byWait = new Map(STUCK_ESCALATIONS.map((e) => [e.wait, e]));
const byStuck = new Map(STUCK_ESCALATIONS.map((e) => [e.stuck, e]));

export class StuckTimingTracker {
  /** `${uid}|${condition type}` -> the wait seen and since when (virtual ms). */
  private readonly waits = new Map<string, { wait: string; since: number }>();

  constructor(private readonly world: StateSource) {}

  async findings(): Promise<ContractFinding[]> {
    const now = this.world.clock.now();
    const out: ContractFinding[] = [];
    const seen = new Set<string>();
    for (const hm of await listShared<HCSMachine>(this.world.mgmt, 'HCSMachine')) {
      const uid = hm.metadata.uid ?? `${hm.metadata.namespace}/${hm.metadata.name}`;
      for (const c of hm.status?.conditions ?? []) {
        const k = `${uid}|${c.type}`;
        const reason = c.status === 'False' ? c.reason : undefined;
        const asWait = reason ? byWait.get(reason) : undefined;
        const asStuck = reason ? byStuck.get(reason) : undefined;
        const cur = this.waits.get(k);
        if (asWait) {
          seen.add(k);
          if (cur?.wait !== asWait.wait) this.waits.set(k, { wait: asWait.wait, since: now });
        } else if (asStuck) {
          seen.add(k);
          // Stuck first seen without its wait (a replay, a check that came late): nothing to time it by.
          if (cur?.wait !== asStuck.wait) continue;
          const waited = now - cur.since;
          if (waited < asStuck.afterMs - STUCK_TOLERANCE_MS) {
            const ns = hm.metadata.namespace ?? 'default';
            out.push({
              rule: 'OPS-2',
              key: `OPS-2/stuck-early/${uid}/${c.type}/${cur.since}`,
              message: `HCSMachine ${ns}/${hm.metadata.name} reports ${c.type} ${asStuck.stuck} after ${fmt(waited)} of ${asStuck.wait}: a wait is stuck only after ${fmt(asStuck.afterMs)} (docs/provider.md "Stuck states"), so a normal ${asStuck.wait === 'InstanceProvisioning' ? 'build' : asStuck.wait === 'DetachingDisks' ? 'detach' : 'attach'} is reported as an alarm`,
              refs: [hm.metadata.name],
            });
          }
        }
      }
    }
    for (const k of [...this.waits.keys()]) if (!seen.has(k)) this.waits.delete(k);
    return out;
  }
}

function fmt(ms: number): string {
  return ms >= 60_000 && ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`;
}
