/**
 * StrykerJS over the product code, the scenario library as the test (issue 37; stryker.config.mjs,
 * test/mutation/): mutants, killed, survived, no coverage and timeout per folder and in total, the score per
 * folder, the wall time of the full run, and that of an incremental run after a one-file change.
 *
 *   npm run bench -- mutation
 *   BENCH_MUTATION_FULL=out/mutation npm run bench -- mutation   # the figures of an earlier full run (npm run mutation -- run), then the incremental run
 *   BENCH_MUTATION_EDIT='src/product/provider/surge.ts|surge <= 0|0 >= surge' npm run bench -- mutation
 *
 * The incremental run: the tracked tree copied to a temporary folder, the full run's incremental file beside it,
 * one line of one mutated file changed (BENCH_MUTATION_EDIT, file|from|to; the default keeps the meaning and
 * changes the line's mutants), `stryker run --incremental` there. Opt-in (not in a plain `npm run bench`): a
 * full run is hours of CPU (docs/scenarios.md "Mutation testing").
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stryker, writeSummary, type RunStats } from '../test/mutation/cli.js';
import { readReport, scoresOf } from '../test/mutation/report.js';
import type { BenchResult } from './library.js';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const DEFAULT_EDIT = 'src/product/provider/surge.ts|surge <= 0|0 >= surge';

/** The tracked files (as they are in the working tree) copied to `dir`, node_modules linked. */
function copyTree(dir: string): void {
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const f of files) {
    if (!existsSync(join(ROOT, f))) continue;
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    cpSync(join(ROOT, f), join(dir, f));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
}

/** Stryker's own count of reused results ("Incremental report: N of M mutant result(s) are reused"). */
function reused(log: string): string {
  return /(\d+) of (\d+) mutant result\(s\) are reused/.exec(log)?.slice(1, 3).join(' of ') ?? '?';
}

export async function benchMutation(): Promise<BenchResult[]> {
  const env = process.env;
  const out: BenchResult[] = [];
  let full: RunStats;
  let fullDir: string;
  if (env.BENCH_MUTATION_FULL) {
    fullDir = resolve(env.BENCH_MUTATION_FULL);
    const s = JSON.parse(readFileSync(join(fullDir, 'scores.json'), 'utf8')) as { wallS?: number; cpuS?: number };
    full = { wallS: s.wallS ?? Number.NaN, cpuS: s.cpuS ?? Number.NaN, exit: 0 };
  } else {
    fullDir = join(ROOT, 'out/mutation');
    full = await stryker({}, ['--force'], join(fullDir, 'stryker.log'), Boolean(env.BENCH_VERBOSE));
    if (!existsSync(join(fullDir, 'mutation.json'))) throw new Error(`the full run wrote no report (exit ${full.exit}; out/mutation/stryker.log)`);
    writeSummary(fullDir, 'Mutation testing (full run)', full);
  }
  const report = readReport(join(fullDir, 'mutation.json'));
  const s = scoresOf(report);
  const load = `load ${loadavg()[0]!.toFixed(1)}`;
  for (const [d, c] of [...s.folders, ['total', s.total] as const]) {
    out.push({
      name: `mutation: ${d}: mutants / killed / survived / no coverage / timeout`,
      value: c.mutants,
      unit: 'mutants',
      note: `${c.killed} killed, ${c.survived} survived, ${c.noCoverage} no coverage, ${c.timeout} timeout${c.errors ? `, ${c.errors} errors` : ''}`,
    });
    out.push({ name: `mutation: ${d}: score`, value: c.score, unit: '%', note: d === 'total' ? 'goal: 90 % on src/product/provider and src/world/guest, 80 % on the rest' : `covered ${c.coveredScore.toFixed(1)} %` });
  }
  out.push({ name: 'mutation: full run wall time', value: full.wallS, unit: 's wall', note: `CPU ${Number.isNaN(full.cpuS) ? '?' : full.cpuS.toFixed(0)} s${env.BENCH_MUTATION_FULL ? `, from ${env.BENCH_MUTATION_FULL}` : `, ${load}`}; target 3600 s on 2 cores` });

  // The incremental run after a one-file change, in a copy of the tree.
  const [file, from, to] = (env.BENCH_MUTATION_EDIT ?? DEFAULT_EDIT).split('|') as [string, string, string];
  const dir = mkdtempSync(join(tmpdir(), 'hcs-mutation-incr-'));
  try {
    copyTree(dir);
    const text = readFileSync(join(dir, file), 'utf8');
    if (text.split(from).length !== 2) throw new Error(`BENCH_MUTATION_EDIT: ${JSON.stringify(from)} must occur once in ${file}`);
    writeFileSync(join(dir, file), text.replace(from, to));
    mkdirSync(join(dir, 'out/mutation'), { recursive: true });
    cpSync(join(fullDir, 'stryker-incremental.json'), join(dir, 'out/mutation/stryker-incremental.json'));
    const t0 = performance.now();
    const bin = join(ROOT, 'node_modules/@stryker-mutator/core/bin/stryker.js');
    let log = '';
    try {
      log = execFileSync('nice', ['-n', '10', 'node', bin, 'run', '--incremental'], { cwd: dir, encoding: 'utf8', maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      throw new Error(`the incremental run failed: ${String((e as { stdout?: string }).stdout ?? e).slice(-800)}`);
    }
    const wall = (performance.now() - t0) / 1000;
    const incr = scoresOf(readReport(join(dir, 'out/mutation/mutation.json'))).total;
    out.push({ name: 'mutation: incremental run after a one-file change, wall time', value: wall, unit: 's wall', note: `${file}: ${JSON.stringify(from)} -> ${JSON.stringify(to)}; results reused: ${reused(log)}; total after it ${incr.mutants} mutants, score ${incr.score.toFixed(1)} %; ${load}; target 600 s` });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
