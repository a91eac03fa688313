/**
 * Parallel figures (issue 14): explore runs per second with 1 and 2 worker
 * processes (target: ≥ 1.8× with 2), and the wall time of the whole library
 * with `run --jobs 1` and `--jobs 2` (target: < 4 s with 2 jobs). Printed,
 * never asserted; other load on the machine shows in them.
 *
 *   npm run bench -- explore
 *   BENCH_EXPLORE_RUNS=100 npm run bench -- explore   # default 40
 */
import { availableParallelism, loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { main } from '../src/cli/main.js';
import { explore } from '../src/explore/explore.js';

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

async function libraryWall(jobs: number): Promise<{ s: number; code: number }> {
  const t0 = performance.now();
  const code = await main(['run', 'scenarios', '--jobs', String(jobs), '--no-color'], () => undefined);
  return { s: (performance.now() - t0) / 1000, code };
}

export async function benchExplore(): Promise<BenchResult[]> {
  const runs = Number(process.env.BENCH_EXPLORE_RUNS ?? 40);
  const load = `load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores`;
  const one = await exploreRate(1, runs);
  const two = await exploreRate(2, runs);
  const lib1 = await libraryWall(1);
  const lib2 = await libraryWall(2);
  const failed = (c: number): string => (c === 0 ? '' : `; exit ${c}: a scenario FAILED`);
  return [
    { name: `explore ${SCENARIO.split('/').pop()}: runs/s, 1 job`, value: one, unit: 'runs/s', note: `${runs} runs; ${load}` },
    { name: 'explore: runs/s, 2 jobs', value: two, unit: 'runs/s', note: `speed-up ${(two / one).toFixed(2)}× (target ≥ 1.8×)` },
    { name: 'library: run --jobs 1', value: lib1.s, unit: 's wall', note: `in this process${failed(lib1.code)}` },
    { name: 'library: run --jobs 2', value: lib2.s, unit: 's wall', note: `this process + 1 worker; target < 4 s; speed-up ${(lib1.s / lib2.s).toFixed(2)}×${failed(lib2.code)}; ${loadavg()[0]!.toFixed(1)} load now` },
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const r of await benchExplore()) console.log(`${r.name}: ${r.value.toFixed(2)} ${r.unit}${r.note ? `  (${r.note})` : ''}`);
}
