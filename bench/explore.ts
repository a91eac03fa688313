/**
 * Parallel figures (issue 14): explore runs per second with 1 and 2 worker
 * processes (target: ≥ 1.8× with 2), and the wall time of the whole library
 * with `run --jobs 1` and `--jobs 2` (target: < 4 s with 2 jobs). Printed,
 * never asserted; other load on the machine shows in them.
 *
 *   npm run bench -- explore
 *   BENCH_EXPLORE_RUNS=100 npm run bench -- explore   # default 40
 */
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { main } from '../src/cli/main.js';
import { explore } from '../src/explore/explore.js';
import { WORKER_EXEC_ARGV } from '../src/explore/pool.js';
import { workerBundle } from '../src/explore/worker-bundle.js';

export interface BenchResult {
  name: string;
  value: number;
  unit: string;
  note?: string;
}

const SCENARIO = 'test/explore/fixtures/one-worker-upgrade.yaml';

async function exploreRate(jobs: number, runs: number): Promise<number> {
  // No shrinking: the figure is the exploration loop's throughput (warm workers; the baseline run excluded).
  const r = await explore({ file: SCENARIO, seed: 1, runs, jobs, maxFindings: 0, out: 'out/bench-explore' });
  return r.runsPerSecond;
}

/** This process's child processes (Linux /proc; none elsewhere). */
function children(): number[] {
  try {
    return readFileSync(`/proc/self/task/${process.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * CPU seconds of this process and its workers while `fn` runs: what a run
 * costs whatever else the machine is doing (the wall time of a parallel run
 * on a busy machine says little). Workers are sampled every 50 ms, so up to
 * that much of each one's last moments is missed.
 */
async function withCpu<T>(fn: () => Promise<T>): Promise<{ value: T; cpu: number }> {
  const c0 = process.cpuUsage();
  const seen = new Map<number, number>();
  const sample = (): void => {
    for (const pid of children()) {
      const c = cpuOf(pid);
      if (c > 0) seen.set(pid, c);
    }
  };
  const timer = setInterval(sample, 50);
  try {
    const value = await fn();
    const c = process.cpuUsage(c0);
    return { value, cpu: (c.user + c.system) / 1e6 + [...seen.values()].reduce((a, b) => a + b, 0) };
  } finally {
    clearInterval(timer);
  }
}

async function libraryWall(jobs: number): Promise<{ s: number; code: number; cpu: number }> {
  const t0 = performance.now();
  const { value: code, cpu } = await withCpu(() => main(['run', 'scenarios', '--jobs', String(jobs), '--no-color'], () => undefined));
  return { s: (performance.now() - t0) / 1000, code, cpu };
}

/** CPU seconds a process has used so far (Linux /proc; 0 elsewhere). */
function cpuOf(pid: number): number {
  try {
    const st = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return 0;
  }
}

/** One worker process from fork to its `ready` answer: wall ms and its CPU ms (best of three). */
async function workerStart(entry: string): Promise<{ wall: number; cpu: number }> {
  let best = { wall: Infinity, cpu: Infinity };
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const child = fork(entry, [], { execArgv: WORKER_EXEC_ARGV, serialization: 'advanced', stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    await new Promise<void>((resolve) => {
      child.once('message', () => resolve());
      child.send({ id: 1, type: 'init' });
    });
    const r = { wall: performance.now() - t0, cpu: cpuOf(child.pid!) * 1000 };
    child.disconnect();
    await new Promise((r2) => child.once('exit', r2));
    if (r.wall < best.wall) best = r;
  }
  return best;
}

const load = (): string => `load ${loadavg()[0]!.toFixed(1)}`;

export async function benchExplore(): Promise<BenchResult[]> {
  const runs = Number(process.env.BENCH_EXPLORE_RUNS ?? 40);
  const cores = `${availableParallelism()} cores`;
  const out: BenchResult[] = [];
  const bundle = await workerBundle();
  const tsx = await workerStart(fileURLToPath(new URL('../src/explore/worker-entry.mjs', import.meta.url)));
  out.push({ name: 'worker start-up through tsx', value: tsx.wall, unit: 'ms wall', note: `${tsx.cpu.toFixed(0)} ms CPU; ${load()}` });
  if (bundle) {
    const b = await workerStart(bundle);
    out.push({ name: 'worker start-up from the cached bundle (used)', value: b.wall, unit: 'ms wall', note: `${b.cpu.toFixed(0)} ms CPU; ${load()}` });
  } else out.push({ name: 'worker start-up from the cached bundle', value: 0, unit: '', note: 'no bundle (esbuild missing or cache not writable): workers use tsx' });
  // Back to back, each figure with the load average of its moment (other processes on the machine show in them).
  const l1 = load();
  const { value: one, cpu: cpu1 } = await withCpu(() => exploreRate(1, runs));
  const l2 = load();
  const { value: two, cpu: cpu2 } = await withCpu(() => exploreRate(2, runs));
  const perRun = (cpu: number, jobs: number): string => `${((cpu * 1000) / (runs + jobs)).toFixed(0)} ms CPU per run (start-up and baseline included)`;
  out.push({ name: `explore ${SCENARIO.split('/').pop()}: runs/s, 1 job`, value: one, unit: 'runs/s', note: `${runs} runs, ${perRun(cpu1, 1)}; ${l1} on ${cores}` });
  out.push({ name: 'explore: runs/s, 2 jobs', value: two, unit: 'runs/s', note: `speed-up ${(two / one).toFixed(2)}× (target ≥ 1.8×), ${perRun(cpu2, 2)}; ${l2}` });
  const failed = (c: number): string => (c === 0 ? '' : `; exit ${c}: a scenario FAILED`);
  const l3 = load();
  const lib1 = await libraryWall(1);
  const l4 = load();
  const lib2 = await libraryWall(2);
  out.push({ name: 'library: run --jobs 1', value: lib1.s, unit: 's wall', note: `in this process, ${lib1.cpu.toFixed(1)} s CPU${failed(lib1.code)}; ${l3}` });
  out.push({
    name: 'library: run --jobs 2',
    value: lib2.s,
    unit: 's wall',
    note: `2 workers, ${lib2.cpu.toFixed(1)} s CPU in all (on 2 idle cores: ~${(lib2.cpu / 2).toFixed(1)} s); target < 4 s; speed-up ${(lib1.s / lib2.s).toFixed(2)}×${failed(lib2.code)}; ${l4}`,
  });
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const r of await benchExplore()) console.log(`${r.name}: ${r.value.toFixed(2)} ${r.unit}${r.note ? `  (${r.note})` : ''}`);
}
