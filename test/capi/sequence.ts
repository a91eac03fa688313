/**
 * Replays a rolling update the way upstream's sequence tests do
 * (kubernetes-sigs/cluster-api internal/controllers/machinedeployment/
 * machinedeployment_rollout_rollingupdate_test.go runRollingUpdateTestCase and
 * machinedeployment_rollout_sequence_test.go, default controller order): each
 * iteration reconciles the MachineDeployment (the pure planner in
 * src/world/capi/rollout-planner.ts, its intents applied to spec.replicas), then each
 * MachineSet in order with a fake MachineSet controller that creates Machines
 * named m<N> and deletes the oldest first; every Machine is available at once.
 * The log has the format of upstream's golden files
 * (testdata/rollingupdate/*.test.log.golden), so the two can be compared line by line.
 */
import { mdMaxSurge, mdMaxUnavailable, plan, totalMachineSetsReplicaSum, type RolloutDeployment, type RolloutMachineSet } from '../../src/world/capi/rollout-planner.js';

export interface SeqMS {
  name: string;
  version: string;
  spec: number;
  machines: string[];
  status?: number;
  available?: number;
}

export interface SeqScope {
  md: { version: string; replicas: number; maxSurge: number; maxUnavailable: number; statusReplicas?: number };
  machineSets: SeqMS[];
  machineUID: number;
}

export interface SeqResult {
  log: string[];
  /** "Result of rollout planner" after every MD reconcile, one line each: "md 4/3 | ms1 3/2 (m1,m2,m3) | ms2 1/1 (m4)". */
  plannerResults: string[];
  iterations: number;
  done: boolean;
  /** maxUnavailable / maxSurge breaches observed after an MD reconcile (upstream tolerates some; see docs/capi.md). */
  breaches: string[];
}

/** A stable scope: ms1 holds `names` at version v1, the MD asks for v2 with the given strategy. */
export function initialScope(names: string[], maxSurge: number, maxUnavailable: number): SeqScope {
  return {
    md: { version: 'v2', replicas: names.length, maxSurge, maxUnavailable, statusReplicas: names.length },
    machineSets: [{ name: 'ms1', version: 'v1', spec: names.length, machines: [...names], status: names.length, available: names.length }],
    machineUID: names.length,
  };
}

function num(n: string): number {
  return Number(n.replace(/^m/, ''));
}

function msLine(ms: SeqMS): string {
  return `${ms.status ?? 0}/${ms.spec} replicas (${ms.machines.join(',')})`;
}

function scopeText(s: SeqScope): string[] {
  const sorted = [...s.machineSets].sort((a, b) => (a.name < b.name ? -1 : 1));
  return [`  md, ${s.md.statusReplicas ?? 0}/${s.md.replicas} replicas`, ...sorted.map((ms) => `  - ${ms.name}, ${msLine(ms)}`)];
}

function compact(s: SeqScope): string {
  const sorted = [...s.machineSets].sort((a, b) => (a.name < b.name ? -1 : 1));
  return [`md ${s.md.statusReplicas ?? 0}/${s.md.replicas}`, ...sorted.map((ms) => `${ms.name} ${ms.status ?? 0}/${ms.spec} (${ms.machines.join(',')})`)].join(' | ');
}

/** MachineSetsByDecreasingReplicas, then the first one whose template is up to date (mdutil.FindNewMachineSet). */
function findNew(s: SeqScope): SeqMS | undefined {
  const idx = s.machineSets.map((ms, i) => ({ ms, i }));
  idx.sort((a, b) => (a.ms.spec !== b.ms.spec ? b.ms.spec - a.ms.spec : a.i - b.i));
  return idx.find((x) => x.ms.version === s.md.version)?.ms;
}

function toPlanner(ms: SeqMS, i: number): RolloutMachineSet {
  return { name: ms.name, created: i, specReplicas: ms.spec, statusReplicas: ms.status ?? 0, availableReplicas: ms.available ?? 0 };
}

export function runSequence(name: string, start: SeqScope, desiredMachines: string[], maxIterations = 50): SeqResult {
  const s: SeqScope = structuredClone(start);
  const log: string[] = [`## ${name}`, '', '[Test] Initial state', ...scopeText(s)];
  const plannerResults: string[] = [];
  const breaches: string[] = [];
  log.push(`[Test] Rollout ${s.machineSets.reduce((n, ms) => n + ms.machines.length, 0)} replicas, MaxSurge=${s.md.maxSurge}, MaxUnavailable=${s.md.maxUnavailable}`);
  const md = (): RolloutDeployment => ({ replicas: s.md.replicas, strategy: 'RollingUpdate', maxSurge: s.md.maxSurge, maxUnavailable: s.md.maxUnavailable });
  let i = 1;
  for (;;) {
    const tasks = ['md', ...s.machineSets.map((ms) => ms.name), `ms${s.machineSets.length + 1}`];
    for (const task of tasks) {
      if (task === 'md') {
        log.push(`[MD controller] Iteration ${i}, Reconcile md`, '[MD controller] - Input to rollout planner', ...scopeText(s));
        let newMS = findNew(s);
        if (!newMS) {
          newMS = { name: `ms${s.machineSets.length + 1}`, version: s.md.version, spec: 0, machines: [], status: 0, available: 0 };
          s.machineSets.push(newMS);
        }
        const nm = newMS;
        const p = plan(
          md(),
          toPlanner(nm, s.machineSets.indexOf(nm)),
          s.machineSets.filter((x) => x !== nm).map((x) => toPlanner(x, s.machineSets.indexOf(x))),
        );
        for (const ms of s.machineSets) {
          const v = p.scaleIntents[ms.name];
          if (v !== undefined) ms.spec = v;
        }
        s.md.statusReplicas = s.machineSets.reduce((n, ms) => n + (ms.status ?? 0), 0);
        log.push('[MD controller] - Result of rollout planner', ...scopeText(s));
        plannerResults.push(compact(s));
        const available = s.machineSets.reduce((n, ms) => n + (ms.available ?? 0), 0);
        const minAvailable = s.md.replicas - mdMaxUnavailable(md());
        if (available < minAvailable) breaches.push(`iteration ${i}: available ${available} < ${minAvailable}`);
        const total = totalMachineSetsReplicaSum(s.machineSets.map((x, j) => toPlanner(x, j)));
        const maxAllowed = s.md.replicas + mdMaxSurge(md());
        if (total > maxAllowed) breaches.push(`iteration ${i}: replicas ${total} > ${maxAllowed}`);
        continue;
      }
      const ms = s.machineSets.find((x) => x.name === task);
      if (!ms) continue;
      log.push(`[MS controller] Iteration ${i}, Reconcile ${ms.name}, ${msLine(ms)}`);
      ms.machines.sort((a, b) => num(a) - num(b));
      const add = ms.spec - ms.machines.length;
      if (add > 0) {
        const created: string[] = [];
        for (let k = 0; k < add; k++) created.push(`m${++s.machineUID}`);
        ms.machines.push(...created);
        log.push(`[MS controller] - ${ms.name} scale up to ${ms.spec}/${ms.spec} replicas (${created.join(',')} created)`);
      }
      const del = Math.max(ms.machines.length - ms.spec, 0);
      if (del > 0) {
        const gone = ms.machines.splice(0, del);
        log.push(`[MS controller] - ${ms.name} scale down to ${ms.spec}/${ms.spec} replicas (${gone.join(',')} deleted)`);
      }
      ms.status = ms.machines.length;
      ms.available = ms.machines.length;
    }
    const newMS = findNew(s);
    const done =
      !!newMS &&
      newMS.spec === s.md.replicas &&
      (newMS.status ?? 0) === s.md.replicas &&
      newMS.machines.join(',') === desiredMachines.join(',') &&
      s.machineSets.every((ms) => ms === newMS || (ms.spec === 0 && (ms.status ?? 0) === 0)) &&
      s.md.statusReplicas === s.md.replicas;
    if (done) {
      log.push('[Test] Final state', ...scopeText(s));
      return { log, plannerResults, iterations: i, done: true, breaches };
    }
    i++;
    if (i > maxIterations) return { log, plannerResults, iterations: i - 1, done: false, breaches };
  }
}
