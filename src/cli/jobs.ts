/**
 * `hcs-testbed run --jobs N`: the scenarios of a run on N worker processes
 * (src/explore/pool.ts), each scenario on its own fresh embedded testbed, as
 * sequentially. Results come back in the
 * order of the scenario list (console output, reports and exit code are
 * those of the sequential run; only wall times differ), and every event log
 * is the one the sequential run writes: a scenario's run depends on its
 * file and seed alone.
 *
 * The workers take the scenarios longest first (by an estimate from their
 * steps), each the next as soon as it answers; this process only hands them
 * out and collects the results (src/cli/main.ts starts the workers before it
 * reads the files, and hands each worker the parsed scenario). (It used to run scenarios
 * itself beside N-1 workers, but a scenario runs on promises without
 * yielding to the event loop, so while it ran the workers' answers waited
 * unread and the workers sat idle: with 2 jobs a worker spent most of the
 * run waiting, and the library took 7.2 s instead of ~4. A worker starts in
 * ~0.3 s from the precompiled bundle, src/explore/worker-bundle.ts.)
 */
import { loadPlugin } from '../explore/plugin.js';
import { WorkerPool } from '../explore/pool.js';
import type { ScenarioResult } from '../scenario/runner.js';
import type { Scenario } from '../scenario/types.js';

export interface ParallelOptions {
  jobs: number;
  seed?: number;
  plugin?: string;
  /** Workers already started (by the caller, who closes them); else runParallel starts and closes its own. */
  pool?: WorkerPool;
}

export type Outcome = { result: ScenarioResult } | { error: string; input: boolean };

/** A rough cost: waits and rollouts dominate a scenario's wall time. */
function cost(s: Scenario): number {
  return s.steps.reduce((n, st) => n + (st.kind === 'wait' ? 4 + Math.min(st.timeoutMs / 600_000, 12) : st.kind === 'crash' ? 3 : 1), 0);
}

/** Run every scenario; `onOutcome` is called in list order as soon as a scenario and all before it are done. */
export async function runParallel(scenarios: Scenario[], o: ParallelOptions, onOutcome: (i: number, out: Outcome) => void): Promise<Outcome[]> {
  const outcomes: (Outcome | undefined)[] = new Array(scenarios.length);
  let shown = 0;
  const settle = (i: number, out: Outcome): void => {
    outcomes[i] = out;
    while (shown < scenarios.length && outcomes[shown]) onOutcome(shown, outcomes[shown++]!);
  };
  const order = scenarios.map((s, i) => ({ i, c: cost(s) })).sort((a, b) => b.c - a.c || a.i - b.i).map((x) => x.i);
  if (o.plugin) await loadPlugin(o.plugin); // a bad plugin fails here, before any worker starts
  // A pool started by the caller (src/cli/main.ts starts it before reading the files) is used and left to it to close.
  const pool = o.pool ?? new WorkerPool({ jobs: Math.min(o.jobs, scenarios.length), ...(o.plugin ? { plugin: o.plugin } : {}) });
  const inWorker = async (): Promise<void> => {
    for (let i = order.shift(); i !== undefined; i = order.shift()) {
      const s = scenarios[i]!;
      const r = await pool.run({ type: 'scenario', file: s.file, scenario: s, ...(o.seed !== undefined ? { seed: o.seed } : {}) });
      settle(i, 'result' in r ? { result: r.result } : 'error' in r ? { error: r.error, input: r.input } : { error: 'unexpected answer from the worker', input: false });
    }
  };
  try {
    await Promise.all(Array.from({ length: pool.size }, () => inWorker()));
  } finally {
    if (!o.pool) await pool.close();
  }
  return outcomes as Outcome[];
}
