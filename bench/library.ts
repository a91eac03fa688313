/**
 * Wall time of the whole scenario library on the embedded backend, one
 * scenario after another in this process (target, issue 36: under 3 s for
 * 20 scenarios on the project machine), with the CPU seconds beside each wall time: on a shared machine
 * the wall time includes waiting for a core, the CPU time does not. (`run
 * --jobs 1` and `--jobs 2`, with the workers' CPU, are in bench/explore.ts.)
 * Beside it, the seed sweep CI runs (`run scenarios --seeds 5`, issue 22):
 * every scenario on its own seed and 4 derived ones, one after another here.
 * Run alone: `npx tsx bench/library.ts`. BENCH_PROFILE=out.cpuprofile writes
 * a CPU profile of the single-seed pass (not the process's start-up, not the
 * sweep); BENCH_SEEDS=1 skips the sweep.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { loadScenario } from '../src/harness/scenario/parse.js';
import { runScenario } from '../src/harness/scenario/runner.js';
import { sweep } from '../src/harness/scenario/seeds.js';
import { embeddedTestbedFactory } from '../src/harness/testbed/index.js';

export interface BenchResult {
  name: string;
  value: number;
  unit: string;
  note?: string;
}

/** Seeds per scenario in the sweep figure (what CI runs). */
export const SWEEP_SEEDS = 5;

export async function benchLibrary(dir = 'scenarios', seeds = SWEEP_SEEDS): Promise<BenchResult[]> {
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort();
  const out: BenchResult[] = [];
  const cpuSince = (c0: NodeJS.CpuUsage): number => {
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / 1e6;
  };
  const profiler = process.env.BENCH_PROFILE ? new Session() : undefined;
  if (profiler) {
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.start');
  }
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  let failed = 0;
  for (const f of files) {
    const c0 = process.cpuUsage();
    const s = loadScenario(join(dir, f));
    const r = await runScenario(s, embeddedTestbedFactory());
    if (!r.ok) failed++;
    out.push({ name: `library: ${s.name}`, value: r.wallMs / 1000, unit: 's wall', note: `${cpuSince(c0).toFixed(2)} s CPU, ${(r.virtualMs / 60_000).toFixed(1)} min virtual, ${r.events.length} events${r.ok ? '' : ', FAILED'}` });
  }
  if (profiler) {
    const { profile } = await profiler.post('Profiler.stop');
    writeFileSync(process.env.BENCH_PROFILE!, JSON.stringify(profile));
    profiler.disconnect();
  }
  const single: BenchResult = {
    name: `library: all ${files.length} scenarios`,
    value: (performance.now() - t0) / 1000,
    unit: 's wall',
    note: `${cpuSince(cpu0).toFixed(2)} s CPU (this process); target < 3 s for 20 scenarios (issue 36); load ${loadavg()[0]!.toFixed(1)}${failed ? `; ${failed} FAILED` : ''}`,
  };
  const sweepResults: BenchResult[] = [];
  if (seeds > 1) {
    const runs = sweep(files.map((f) => loadScenario(join(dir, f))), seeds);
    const t1 = performance.now();
    const cpu1 = process.cpuUsage();
    let sweepFailed: string[] = [];
    for (const s of runs) {
      const r = await runScenario(s, embeddedTestbedFactory());
      if (!r.ok) sweepFailed = [...sweepFailed, s.name];
    }
    sweepResults.push({
      name: `library: all ${files.length} scenarios x ${seeds} seeds (run --seeds ${seeds})`,
      value: (performance.now() - t1) / 1000,
      unit: 's wall',
      note: `${runs.length} runs, ${cpuSince(cpu1).toFixed(2)} s CPU (this process), ${(((performance.now() - t1) / 1000) / single.value).toFixed(1)}x the single-seed figure; load ${loadavg()[0]!.toFixed(1)}${sweepFailed.length ? `; FAILED: ${sweepFailed.join(', ')}` : ''}`,
    });
  }
  return [single, ...sweepResults, ...out];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const r of await benchLibrary('scenarios', Number(process.env.BENCH_SEEDS ?? SWEEP_SEEDS))) console.log(`${r.name}: ${r.value.toFixed(2)} ${r.unit}${r.note ? `  (${r.note})` : ''}`);
}
