/**
 * `hcs-testbed run --jobs N`: the scenarios of a run on N worker processes
 * (src/harness/explore/pool.ts), each scenario on its own fresh embedded testbed, as
 * sequentially. Results come back in the
 * order of the scenario list (console output, reports and exit code are
 * those of the sequential run; only wall times differ), and every event log
 * is the one the sequential run writes: a scenario's run depends on its
 * file and seed alone.
 *
 * The workers take the scenarios longest first (by an estimate from their
 * steps), each the next as soon as it answers; this process only hands them
 * out and collects the results (src/harness/cli/main.ts starts the workers before it
 * reads the files, and hands each worker the parsed scenario). (It used to run scenarios
 * itself beside N-1 workers, but a scenario runs on promises without
 * yielding to the event loop, so while it ran the workers' answers waited
 * unread and the workers sat idle: with 2 jobs a worker spent most of the
 * run waiting, and the library took 7.2 s instead of ~4. A worker starts in
 * ~0.3 s from the precompiled bundle, src/harness/explore/worker-bundle.ts.)
 */
import { loadPlugin } from '../explore/plugin.js';
import { WorkerPool, type Reply } from '../explore/pool.js';
import type { ScenarioResult } from '../scenario/runner.js';
import type { Scenario } from '../scenario/types.js';

export interface ParallelOptions {
  jobs: number;
  seed?: number;
  plugin?: string;
  /** Workers already started (by the caller, who closes them); else runParallel starts and closes its own. */
  pool?: WorkerPool;
}

/**
 * A scenario's outcome. `retried` holds why the first run on a worker did not
 * give a verdict (the worker died, stalled or timed out, or the testbed did
 * not start) when the scenario was run a second time; that second run's
 * outcome is the one given (a scenario's run depends on its file and seed
 * alone, so a run on a fresh worker is what `--jobs 1` would have run).
 */
export type Outcome = ({ result: ScenarioResult } | { error: string; input: boolean }) & { retried?: string };

/**
 * Why this outcome is the worker's failure rather than the scenario's
 * verdict, or undefined when it is a verdict: an error that is not an input
 * error (a worker that exited, stalled, timed out or answered something
 * else), or a run that failed before its first step (the testbed did not start).
 */
export function workerFailure(out: Outcome): string | undefined {
  if ('error' in out) return out.input ? undefined : out.error;
  const [first] = out.result.steps;
  if (!out.result.ok && out.result.steps.length === 1 && first && first.index === 0 && !first.ok && !first.inputError) return first.error ?? first.title;
  return undefined;
}

/** A worker's reply as an outcome. */
export function outcomeOf(r: Reply): Outcome {
  if ('result' in r) return { result: r.result };
  if ('error' in r) return { error: r.error, input: r.input };
  // A scenario job answered with a summary: the worker's stall watchdog (src/harness/explore/worker.ts) gave up on the run.
  if ('summary' in r) return { error: `the worker gave up on the run: ${r.summary.failure?.signature ?? 'no verdict'}${r.summary.failure?.error ? ` (${r.summary.failure.error})` : ''}`, input: false };
  return { error: 'unexpected answer from the worker', input: false };
}

/**
 * The stall limit of a worker running `run --jobs` scenarios: no new event and
 * no move of the virtual clock for this long (wall time) while the run awaits
 * something outside itself. A scenario run waits on the outside only in its
 * bounded steps (the real kubectl: 30 s, src/harness/scenario/real-kubectl.ts), so it
 * is above those; explore's 8 s default (for its own runs, which never wait
 * on the outside) would take a `[real]` kubectl step slowed past 8 s on a
 * loaded machine for a stall.
 */
export const SCENARIO_STALL_MS = 60_000;

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
  // A pool started by the caller (src/harness/cli/main.ts starts it before reading the files) is used and left to it to close.
  const pool = o.pool ?? new WorkerPool({ jobs: Math.min(o.jobs, scenarios.length), ...(o.plugin ? { plugin: o.plugin } : {}) });
  const inWorker = async (): Promise<void> => {
    for (let i = order.shift(); i !== undefined; i = order.shift()) {
      const s = scenarios[i]!;
      const job = { type: 'scenario' as const, file: s.file, scenario: s, ...(o.seed !== undefined ? { seed: o.seed } : {}) };
      let out = outcomeOf(await pool.run(job));
      // A worker's failure is not the scenario's verdict: run it once more (a dead worker has been replaced by then),
      // and say so in the output. Twice is a failure of its own: the second outcome is given, with the first reason.
      const why = workerFailure(out);
      if (why !== undefined) out = { ...outcomeOf(await pool.run(job)), retried: why };
      settle(i, out);
    }
  };
  try {
    await Promise.all(Array.from({ length: pool.size }, () => inWorker()));
  } finally {
    if (!o.pool) await pool.close();
  }
  return outcomes as Outcome[];
}
