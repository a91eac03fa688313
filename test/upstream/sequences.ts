/**
 * Per-hostname replacement sequences of a scenario run, for comparing the
 * model with the upstream managers (test/upstream/scenarios.test.ts,
 * rollouts.test.ts, bench/upstream.ts, bench/upstream-generated.ts).
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
 * steps that changed something and the wait for the result.
 *
 * What the comparison requires (`runShape` + `compareShapes`; docs/capi.md
 * "Compared with the upstream managers" says why each relaxation cannot hide a
 * rule difference, with the upstream source behind it):
 * - `hostnames`: each hostname's sequence over the whole run (all rollouts
 *   together, so an operation that falls after a rollout's wait on one side
 *   and before it on the other still compares equal), as a sorted list. With
 *   the `Random` delete policy (v1.10's default) which Machine a MachineSet
 *   deletes is a hash of its random name
 *   (internal/controllers/machineset/machineset_delete_policy.go
 *   randomDeletePolicy), so which hostname is freed, and from then on where
 *   a replacement lands, differs between any two runs: then only the counts
 *   are compared (`counts`: hostnames ever bound, creations, deletions);
 * - `groups`: the run's operations in time order, those closer than
 *   `windowMs` of virtual time to the previous one in the same group, each
 *   group compared as a multiset ("+-" = "-+"): which of two operations that
 *   the controllers issue in the same reconcile, or in reconciles racing on
 *   two MachineSets, is seen first depends on pacing on the upstream side.
 *   Operations separated by a Machine's provisioning or deletion (minutes of
 *   virtual time) stay ordered, so maxSurge (a creation before a deletion)
 *   and maxUnavailable (a deletion before a creation) still show.
 * - `rollouts` are kept for the report (per rollout: the pattern in time
 *   order), not compared.
 *
 * Under load the groups do not hold on upstream (docs/capi.md), so the
 * upstream tests assert instead a relation that follows from the
 * controllers' causes and holds under any pacing (`entryBounds`): between
 * two waits, the pool entries held never exceed the declared replicas +
 * maxSurge nor fall below replicas - maxUnavailable.
 */
import type { LogEvent } from '../../src/core/events.js';
import type { DeclaredPhase } from '../../src/harness/explore/rollouts.js';
import type { ScenarioResult, TestbedFactory } from '../../src/harness/scenario/runner.js';

export interface RolloutSequences {
  /** The wait step that ends the rollout (title). */
  step: string;
  perHostname: string[];
  pattern: string;
}

export interface Op {
  t: number;
  seq: number;
  hostname: string;
  machine: string;
  kind: '+' | '-';
}

export function opsOf(events: readonly LogEvent[]): Op[] {
  const out: Op[] = [];
  for (const e of events) {
    if (e.source !== 'provider') continue;
    const machine = String(e.data?.machine ?? '');
    if (e.type === 'hcsmachine.entry-bound') out.push({ t: e.t, seq: e.seq, hostname: String(e.data?.hostname ?? ''), machine, kind: '+' });
    else if (e.type === 'hcsmachine.entry-released') for (const h of (e.data?.hostnames as string[] | undefined) ?? []) out.push({ t: e.t, seq: e.seq, hostname: h, machine, kind: '-' });
  }
  return out.sort((a, b) => a.seq - b.seq);
}

/** Machine letters per hostname, in order of appearance over the whole run. */
function letterer(): (h: string, m: string) => string {
  const letters = new Map<string, Map<string, string>>();
  return (h, m) => {
    let perHost = letters.get(h);
    if (!perHost) letters.set(h, (perHost = new Map()));
    let l = perHost.get(m);
    if (!l) perHost.set(m, (l = String.fromCharCode(97 + perHost.size)));
    return l;
  };
}

/** `t0`: the virtual time the runner counted step times from (the testbed's clock when the factory returned it: `recordingStart`). */
export function rolloutSequences(r: ScenarioResult, t0: number): RolloutSequences[] {
  const ops = opsOf(r.events);
  const letter = letterer();
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

export interface ShapeOptions {
  /** Operations closer than this (virtual ms) to the previous one form one group, compared as a set. Default 60 s. */
  windowMs?: number;
  /** The MachineDeployment deletes with the Random policy (v1.10's default): compare hostnames by counts only. */
  randomDeletion?: boolean;
  /**
   * Compare the groups of concurrent operations (default true). Against the upstream managers on a loaded machine
   * (load ~25 on 2 cores) the 60 s window did not hold: 14 of 20 generated rollouts differed only there (docs/capi.md),
   * so the upstream tests report the groups and assert verdicts and counts.
   */
  groups?: boolean;
}

export const DEFAULT_WINDOW_MS = 60_000;

export interface RunShape {
  /** Each hostname's whole-run sequence ("+a -a +b"), sorted. */
  hostnames: string[];
  counts: { hostnames: number; creations: number; deletions: number };
  /** Groups of concurrent operations in time order, each sorted ("+-" is written "+-", never "-+"). */
  groups: string[];
  /** For the report only: per rollout, the pattern in time order. */
  rollouts: RolloutSequences[];
}

export function runShape(r: ScenarioResult, t0: number, opts: ShapeOptions = {}): RunShape {
  const ops = opsOf(r.events);
  const window = opts.windowMs ?? DEFAULT_WINDOW_MS;
  const letter = letterer();
  const byHost = new Map<string, string[]>();
  for (const o of ops) byHost.set(o.hostname, [...(byHost.get(o.hostname) ?? []), `${o.kind}${letter(o.hostname, o.machine)}`]);
  return {
    hostnames: [...byHost.values()].map((v) => v.join(' ')).sort(),
    counts: { hostnames: byHost.size, creations: ops.filter((o) => o.kind === '+').length, deletions: ops.filter((o) => o.kind === '-').length },
    groups: groupOps(ops, window),
    rollouts: rolloutSequences(r, t0),
  };
}

/** Gap clustering: an operation within `windowMs` of the previous one joins its group; each group sorted ("+" before "-"). */
export function groupOps(ops: readonly Pick<Op, 't' | 'kind'>[], windowMs: number): string[] {
  const groups: string[][] = [];
  let last = -Infinity;
  for (const o of ops) {
    if (o.t - last >= windowMs || groups.length === 0) groups.push([]);
    groups[groups.length - 1]!.push(o.kind);
    last = o.t;
  }
  return groups.map((g) => [...g].sort().join(''));
}

/** The differences between two runs' shapes (empty: equal under the comparison's rules). */
export function compareShapes(model: RunShape, upstream: RunShape, opts: ShapeOptions = {}): string[] {
  const diffs: string[] = [];
  const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
  if (!same(model.counts, upstream.counts)) diffs.push(`counts: model ${JSON.stringify(model.counts)}, upstream ${JSON.stringify(upstream.counts)}`);
  if (!opts.randomDeletion && !same(model.hostnames, upstream.hostnames)) diffs.push(`per-hostname sequences: model ${JSON.stringify(model.hostnames)}, upstream ${JSON.stringify(upstream.hostnames)}`);
  if (opts.groups !== false && !same(model.groups, upstream.groups)) diffs.push(`groups of concurrent operations: model ${model.groups.join(' ')}, upstream ${upstream.groups.join(' ')}`);
  return diffs;
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

/**
 * The causal entry bounds of a run (docs/capi.md "Compared with the upstream
 * managers"). Pool entries held = entries bound minus entries released so far
 * (the provider's hcsmachine.entry-bound / entry-released). Between two waits
 * (`declared[p]`: the values in force from the previous wait to wait p, see
 * src/harness/explore/rollouts.ts declaredPhases) the count stays within
 *   [min(held at the phase start, min replicas - max maxUnavailable),
 *    max(held at the phase start, max replicas + max maxSurge)]
 * under any pacing, because each bound is a chain of causes, not a race:
 * - above: an entry is bound by the HCSMachine of an existing Machine and
 *   released before that Machine is gone; a MachineSet counts a Machine until
 *   it is gone ("Machines in deleted state are deliberately not excluded",
 *   cluster-api v1.10.10 internal/controllers/machineset/machineset_controller.go
 *   getAndAdoptMachinesForMachineSet, status.replicas = len(filteredMachines));
 *   and the MachineDeployment creates no Machine beyond replicas + maxSurge of
 *   sum(max(spec.replicas, status.replicas)) (mdutil NewMSNewReplicas,
 *   TotalMachineSetsReplicaSum; paused: sync()/scale() with the same
 *   allowed size);
 * - below: an available Machine holds its entry, and old MachineSets are
 *   scaled down (unhealthy Machines first) only while available Machines stay
 *   at replicas - maxUnavailable or more (machinedeployment_rolling.go
 *   reconcileOldMachineSets / cleanupUnhealthyReplicas /
 *   scaleDownOldMachineSetsForRollingUpdate).
 * The values declared, not the stored spec: a controller (or a mutant) that
 * rewrites the strategy is still held to what the user asked for.
 * Returns the breaches (empty: within bounds), the first of each kind per phase.
 */
export function entryBounds(r: ScenarioResult, t0: number, declared: readonly DeclaredPhase[]): string[] {
  const ops = opsOf(r.events);
  const waits = r.steps.filter((s) => s.kind === 'wait');
  const out: string[] = [];
  let held = 0;
  let i = 0;
  // A wait ends at its step.pass / step.fail event: an operation at the same virtual instant but after it (the next
  // phase's first command acts at once on the model) belongs to the next phase. Runs without step events: by time.
  const endSeq = new Map<number, number>();
  for (const e of r.events) if (e.source === 'scenario' && (e.type === 'step.pass' || e.type === 'step.fail')) endSeq.set(Number(e.data?.step), e.seq);
  const inPhase = (o: Op, p: number): boolean => {
    if (p >= waits.length) return true;
    const seq = endSeq.get(waits[p]!.index);
    return seq !== undefined ? o.seq < seq : o.t <= t0 + waits[p]!.endMs;
  };
  for (let p = 0; p < declared.length && i < ops.length; p++) {
    const d = declared[p]!;
    const title = p < waits.length ? waits[p]!.title : 'after the last wait';
    const maxR = Math.max(...d.replicas);
    const minR = Math.min(...d.replicas);
    const maxS = Math.max(...d.maxSurge);
    const maxU = Math.max(...d.maxUnavailable);
    const hi = Math.max(held, maxR + maxS);
    const lo = Math.max(0, Math.min(held, minR - maxU));
    let above = false;
    let below = false;
    for (; i < ops.length && inPhase(ops[i]!, p); i++) {
      const o = ops[i]!;
      held += o.kind === '+' ? 1 : -1;
      const at = `${o.kind}${o.hostname} at ${((o.t - t0) / 1000).toFixed(0)} s`;
      if (held > hi && !above) {
        above = true;
        out.push(`entry bounds, phase ${p + 1} (${title}): ${held} pool entries held after ${at}, above ${hi} (replicas ${maxR} + maxSurge ${maxS} declared; MD-1)`);
      }
      if (held < lo && !below) {
        below = true;
        out.push(`entry bounds, phase ${p + 1} (${title}): ${held} pool entries held after ${at}, below ${lo} (replicas ${minR} - maxUnavailable ${maxU} declared; MD-1)`);
      }
    }
    if (p >= waits.length) break;
  }
  return out;
}
