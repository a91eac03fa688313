/**
 * Parallel figures (issue 14): explore runs per second with 1 and 2 worker
 * processes (target: ≥ 1.8× with 2), and the wall time of the whole library
 * with `run --jobs 1` and `--jobs 2` (target: < 4 s with 2 jobs). Printed,
 * never asserted; other load on the machine shows in them.
 *
 * This machine's speed drifts by tens of percent within a minute (two vCPUs
 * on a shared host), so each figure is measured in BENCH_ROUNDS rounds that
 * alternate 1 job and 2 jobs, and printed as the median, with the speed-up
 * as the median of each round's own ratio and the machine's own two-process
 * speed-ups of that round beside it (a plain and an allocating loop,
 * bench/support/machine.ts).
 *
 *   npm run bench -- explore
 *   BENCH_EXPLORE_RUNS=100 BENCH_ROUNDS=5 npm run bench -- explore   # defaults 40 and 3
 */
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { main } from '../src/harness/cli/main.js';
import { explore } from '../src/harness/explore/explore.js';
import { WORKER_EXEC_ARGV } from '../src/harness/explore/pool.js';
import { workerBundle } from '../src/harness/explore/worker-bundle.js';
import { machineSpeedups, median } from './support/machine.js';

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
  const tsx = await workerStart(fileURLToPath(new URL('../src/harness/explore/worker-entry.mjs', import.meta.url)));
  out.push({ name: 'worker start-up through tsx', value: tsx.wall, unit: 'ms wall', note: `${tsx.cpu.toFixed(0)} ms CPU; ${load()}` });
  if (bundle) {
    const b = await workerStart(bundle);
    out.push({ name: 'worker start-up from the cached bundle (used)', value: b.wall, unit: 'ms wall', note: `${b.cpu.toFixed(0)} ms CPU; ${load()}` });
  } else out.push({ name: 'worker start-up from the cached bundle', value: 0, unit: '', note: 'no bundle (esbuild missing or cache not writable): workers use tsx' });
  // Alternated rounds, each figure with the load average of its moment (other processes on the machine show in them).
  const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
  const ex: { one: number; two: number; cpu1: number; cpu2: number; loop: { plain: number; allocating: number } }[] = [];
  const lib: { s1: number; s2: number; cpu1: number; cpu2: number; code: number }[] = [];
  const l0 = load();
  for (let r = 0; r < rounds; r++) {
    const loop = await machineSpeedups();
    const a = await withCpu(() => exploreRate(1, runs));
    const b = await withCpu(() => exploreRate(2, runs));
    ex.push({ one: a.value, two: b.value, cpu1: a.cpu, cpu2: b.cpu, loop });
    const lib1 = await libraryWall(1);
    const lib2 = await libraryWall(2);
    lib.push({ s1: lib1.s, s2: lib2.s, cpu1: lib1.cpu, cpu2: lib2.cpu, code: lib1.code || lib2.code });
  }
  const l1 = load();
  const m = <T>(xs: T[], f: (x: T) => number): number => median(xs.map(f));
  const spread = <T>(xs: T[], f: (x: T) => number, d = 2): string => (xs.length > 1 ? ` (rounds: ${xs.map((x) => f(x).toFixed(d)).join(', ')})` : '');
  const perRun = (cpu: number, jobs: number): string => `${((cpu * 1000) / (runs + jobs)).toFixed(0)} ms CPU per run (start-up and baseline included)`;
  const loops = `this machine's own 2-process speed-up: plain loop ${m(ex, (x) => x.loop.plain).toFixed(2)}×${spread(ex, (x) => x.loop.plain)}, allocating loop ${m(ex, (x) => x.loop.allocating).toFixed(2)}×${spread(ex, (x) => x.loop.allocating)}`;
  const note = `median of ${rounds} alternated rounds; ${l0} before, ${l1} after, on ${cores}`;
  out.push({ name: `explore ${SCENARIO.split('/').pop()}: runs/s, 1 job`, value: m(ex, (x) => x.one), unit: 'runs/s', note: `${runs} runs, ${perRun(m(ex, (x) => x.cpu1), 1)}${spread(ex, (x) => x.one)}; ${note}` });
  out.push({
    name: 'explore: runs/s, 2 jobs',
    value: m(ex, (x) => x.two),
    unit: 'runs/s',
    note: `speed-up ${m(ex, (x) => x.two / x.one).toFixed(2)}× (target ≥ 1.8×)${spread(ex, (x) => x.two / x.one)}, ${perRun(m(ex, (x) => x.cpu2), 2)}; ${loops}`,
  });
  const failed = lib.some((x) => x.code !== 0) ? '; a scenario FAILED' : '';
  out.push({ name: 'library: run --jobs 1', value: m(lib, (x) => x.s1), unit: 's wall', note: `in this process, ${m(lib, (x) => x.cpu1).toFixed(1)} s CPU${spread(lib, (x) => x.s1)}${failed}` });
  out.push({
    name: 'library: run --jobs 2',
    value: m(lib, (x) => x.s2),
    unit: 's wall',
    note: `2 workers, ${m(lib, (x) => x.cpu2).toFixed(1)} s CPU in all; target < 4 s; speed-up ${m(lib, (x) => x.s1 / x.s2).toFixed(2)}×${spread(lib, (x) => x.s2)}${failed}`,
  });
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const r of await benchExplore()) console.log(`${r.name}: ${r.value.toFixed(2)} ${r.unit}${r.note ? `  (${r.note})` : ''}`);
}
