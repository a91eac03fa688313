/**
 * Per-hostname replacement sequences of a scenario run, for comparing the
 * model with the upstream managers (test/upstream/scenarios.test.ts).
 *
 * A hostname (a pool entry, with its persistent disks) is held by one
 * Machine at a time: the provider records `hcsmachine.entry-bound` when a
 * new Machine's HCSMachine takes the entry and `hcsmachine.entry-released`
 * when a deleted Machine's HCSMachine gives it back. Per hostname that is
 * the sequence of Machine creations (+) and deletions (−) on it. Machine
 * names are random on both sides, so each Machine is named by its order of
 * appearance on that hostname (a, b, c, …).
 *
 * A "rollout" is the stretch of a run that ends with a `wait` step: the
 * steps that changed something and the wait for the result. For each
 * rollout the comparison uses
 * - `perHostname`: the sorted list of the per-hostname sequences (sorted:
 *   which hostname the MachineSet deletes first is the delete policy's
 *   random pick, on both sides: v1.10's default `Random` ranks by a hash of
 *   the random Machine name, internal/controllers/machineset/machineset_delete_policy.go);
 * - `pattern`: the rollout's operations in time order with hostnames left
 *   out ("−+−+−+" for a maxSurge 0 / maxUnavailable 1 rollout of three).
 */
import type { LogEvent } from '../../src/core/events.js';
import type { ScenarioResult, TestbedFactory } from '../../src/scenario/runner.js';

export interface RolloutSequences {
  /** The wait step that ends the rollout (title). */
  step: string;
  perHostname: string[];
  pattern: string;
}

interface Op {
  t: number;
  seq: number;
  hostname: string;
  machine: string;
  kind: '+' | '-';
}

function opsOf(events: readonly LogEvent[]): Op[] {
  const out: Op[] = [];
  for (const e of events) {
    if (e.source !== 'provider') continue;
    const machine = String(e.data?.machine ?? '');
    if (e.type === 'hcsmachine.entry-bound') out.push({ t: e.t, seq: e.seq, hostname: String(e.data?.hostname ?? ''), machine, kind: '+' });
    else if (e.type === 'hcsmachine.entry-released') for (const h of (e.data?.hostnames as string[] | undefined) ?? []) out.push({ t: e.t, seq: e.seq, hostname: h, machine, kind: '-' });
  }
  return out.sort((a, b) => a.seq - b.seq);
}

/** `t0`: the virtual time the runner counted step times from (the testbed's clock when the factory returned it: `recordingStart`). */
export function rolloutSequences(r: ScenarioResult, t0: number): RolloutSequences[] {
  const ops = opsOf(r.events);
  // Machine letters per hostname, over the whole run.
  const letters = new Map<string, Map<string, string>>();
  const letter = (h: string, m: string): string => {
    let perHost = letters.get(h);
    if (!perHost) letters.set(h, (perHost = new Map()));
    let l = perHost.get(m);
    if (!l) perHost.set(m, (l = String.fromCharCode(97 + perHost.size)));
    return l;
  };
  const out: RolloutSequences[] = [];
  let from = -Infinity;
  for (const s of r.steps) {
    if (s.kind !== 'wait') continue;
    const end = t0 + s.endMs;
    const inside = ops.filter((o) => o.t > from && o.t <= end);
    from = end;
    const byHost = new Map<string, string[]>();
    for (const o of inside) {
      const l = `${o.kind}${letter(o.hostname, o.machine)}`;
      byHost.set(o.hostname, [...(byHost.get(o.hostname) ?? []), l]);
    }
    out.push({ step: s.title, perHostname: [...byHost.values()].map((v) => v.join(' ')).sort(), pattern: inside.map((o) => o.kind).join('') });
  }
  return out;
}

/** A factory that records the clock of each testbed it returns (the runner's t0 for step times). */
export function recordingStart(factory: TestbedFactory): { factory: TestbedFactory; starts: number[] } {
  const starts: number[] = [];
  return {
    starts,
    factory: async (seed) => {
      const tb = await factory(seed);
      starts.push(tb.clock.now());
      return tb;
    },
  };
}
