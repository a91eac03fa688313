/**
 * `hcs-testbed run --jobs N`: the scenarios of a run on N processes — this
 * one and N-1 worker processes (src/explore/pool.ts) — each scenario on its
 * own fresh embedded testbed, as sequentially. Results come back in the
 * order of the scenario list (console output, reports and exit code are
 * those of the sequential run; only wall times differ), and every event log
 * is the one the sequential run writes: a scenario's run depends on its
 * file and seed alone.
 *
 * This process starts at once and takes the longest scenarios first (by an
 * estimate from their steps); the workers, which start a little later and
 * run cold code at first, take the shortest from the other end.
 */
import { errorMessage, InputError } from '../core/errors.js';
import { embeddedFactory, loadPlugin } from '../explore/plugin.js';
import { WorkerPool } from '../explore/pool.js';
import { runScenario, type ScenarioResult } from '../scenario/runner.js';
import type { Scenario } from '../scenario/types.js';

export interface ParallelOptions {
  jobs: number;
  seed?: number;
  plugin?: string;
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
  const plugin = o.plugin ? await loadPlugin(o.plugin) : undefined;
  const helpers = Math.min(o.jobs, scenarios.length) - 1;
  const pool = helpers > 0 ? new WorkerPool({ jobs: helpers, depth: 2, ...(o.plugin ? { plugin: o.plugin } : {}) }) : undefined;
  const take = (): number | undefined => order.pop();
  const inWorker = async (): Promise<void> => {
    for (let i = take(); i !== undefined; i = take()) {
      const s = scenarios[i]!;
      const r = await pool!.run({ type: 'scenario', file: s.file, ...(o.seed !== undefined ? { seed: o.seed } : {}) });
      settle(i, 'result' in r ? { result: r.result } : 'error' in r ? { error: r.error, input: r.input } : { error: 'unexpected answer from the worker', input: false });
    }
  };
  const here = async (): Promise<void> => {
    // This process takes from the front of the queue (the long ones), the workers from the end.
    for (let i = order.shift(); i !== undefined; i = order.shift()) {
      try {
        settle(i, { result: await runScenario(scenarios[i]!, embeddedFactory(plugin), o.seed !== undefined ? { seed: o.seed } : {}) });
      } catch (e) {
        settle(i, { error: errorMessage(e), input: e instanceof InputError });
      }
      // Let the workers' answers in between two scenarios.
      await new Promise((r) => setImmediate(r));
    }
  };
  try {
    await Promise.all([here(), ...Array.from({ length: pool ? pool.size * 2 : 0 }, () => inWorker())]);
  } finally {
    await pool?.close();
  }
  return outcomes as Outcome[];
}
