/**
 * StrykerJS beside the mutant catalogue (issue 22: "where a well-kept tool
 * fits, use it ... report its score beside the catalogue's"): generic
 * mutations of one small provider module, each judged by the scenario library
 * through Stryker's command test runner (`npm run scenarios`). The
 * hand-written catalogue (`npm run bench -- mutants`) stays the measure; this
 * is the tool's score on the same library.
 *
 *   npm run bench -- stryker
 *   BENCH_STRYKER_MUTATE=src/product/provider/surge.ts:45-53 BENCH_STRYKER_LIMIT_S=2400 npm run bench -- stryker
 *
 * Not a project dependency: @stryker-mutator/core is fetched by npx from the
 * npm registry at run time (9.6.1: the last release for Node 20; 10.x needs
 * Node 22). Its tsconfig preprocessor is skipped (tsconfigFile names no file):
 * it would import typescript from npx's cache, where npx does not put it, and
 * the sandbox needs no rewritten tsconfig (tsx reads the copied one). Without
 * the registry the group says so and reports nothing. Opt-in (not in a plain
 * `npm run bench`): each mutant is one library run (~15-60 s).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchResult } from './library.js';

const STRYKER = '@stryker-mutator/core@9.6.1';

/** The mutation-testing-report-schema statuses Stryker writes per mutant. */
type Status = 'Killed' | 'Survived' | 'NoCoverage' | 'Timeout' | 'CompileError' | 'RuntimeError' | 'Ignored' | 'Pending';

export interface StrykerScore {
  mutants: number;
  killed: number;
  timeout: number;
  survived: number;
  noCoverage: number;
  errors: number;
  /** Stryker's mutation score: (killed + timeout) / (all − errors − ignored), in percent. */
  score: number;
}

/** The counts and score of a Stryker JSON report (mutation-testing-report-schema: files.*.mutants[].status). */
export function scoreOf(report: { files: Record<string, { mutants: { status: Status }[] }> }): StrykerScore {
  const all = Object.values(report.files).flatMap((f) => f.mutants.map((m) => m.status));
  const n = (s: Status): number => all.filter((x) => x === s).length;
  const errors = n('CompileError') + n('RuntimeError');
  const valid = all.length - errors - n('Ignored');
  const detected = n('Killed') + n('Timeout');
  return { mutants: all.length, killed: n('Killed'), timeout: n('Timeout'), survived: n('Survived'), noCoverage: n('NoCoverage'), errors, score: valid ? (100 * detected) / valid : 0 };
}

export async function benchStryker(): Promise<BenchResult[]> {
  const env = process.env;
  const mutate = env.BENCH_STRYKER_MUTATE ?? 'src/product/provider/surge.ts:45-53';
  const limitMs = Number(env.BENCH_STRYKER_LIMIT_S ?? 2400) * 1000;
  const dir = mkdtempSync(join(tmpdir(), 'hcs-stryker-'));
  const report = join(dir, 'stryker.json');
  const config = join(dir, 'stryker.config.json');
  writeFileSync(
    config,
    JSON.stringify({
      testRunner: 'command',
      commandRunner: { command: 'npm run scenarios' },
      mutate: [mutate],
      coverageAnalysis: 'off',
      concurrency: 1,
      timeoutMS: 240_000,
      reporters: ['json'],
      jsonReporter: { fileName: report },
      // The sandbox needs the sources, scenarios, data and dashboard; not the tests, docs and tool builds.
      ignorePatterns: ['test', 'bench', '.ci', 'docs', 'tools'],
      tempDirName: '.stryker-tmp',
      tsconfigFile: 'no-tsconfig-rewrite.json',
      cleanTempDir: 'always',
    }),
  );
  const t0 = performance.now();
  try {
    const code = await new Promise<number | string>((resolve) => {
      const child = spawn('nice', ['-n', '10', 'npx', '--yes', '-p', STRYKER, 'stryker', 'run', config], { stdio: env.BENCH_VERBOSE ? 'inherit' : 'ignore', detached: true });
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGTERM');
        } catch {
          // already gone
        }
        resolve(`stopped after ${limitMs / 1000} s (BENCH_STRYKER_LIMIT_S)`);
      }, limitMs);
      child.on('error', (e) => {
        clearTimeout(timer);
        resolve(e.message);
      });
      child.on('exit', (c) => {
        clearTimeout(timer);
        resolve(c ?? 'killed');
      });
    });
    let parsed: Parameters<typeof scoreOf>[0];
    try {
      parsed = JSON.parse(readFileSync(report, 'utf8')) as Parameters<typeof scoreOf>[0];
    } catch {
      throw new Error(`stryker produced no report (exit ${code}; npx needs the npm registry; BENCH_VERBOSE=1 shows its output)`);
    }
    const s = scoreOf(parsed);
    const note = `${mutate}, command runner: npm run scenarios, load ${loadavg()[0]!.toFixed(1)}`;
    return [
      { name: 'stryker: mutants', value: s.mutants, unit: 'mutants', note },
      { name: 'stryker: killed (a library run failed)', value: s.killed, unit: 'mutants' },
      { name: 'stryker: timeouts', value: s.timeout, unit: 'mutants' },
      { name: 'stryker: survived', value: s.survived, unit: 'mutants' },
      { name: 'stryker: compile/runtime errors', value: s.errors, unit: 'mutants' },
      { name: 'stryker: mutation score', value: s.score, unit: '%', note: 'beside the catalogue: npm run bench -- mutants' },
      { name: 'stryker: wall time', value: (performance.now() - t0) / 1000, unit: 's wall' },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
