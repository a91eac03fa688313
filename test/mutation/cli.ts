/**
 * `npm run mutation -- <command>`: StrykerJS over the product code with the scenario library as the test
 * (stryker.config.mjs, test/mutation/scenario-runner.ts), and what issue 37 asks of its results.
 *
 *   npm run mutation -- run                  # full run: every mutant (out/mutation/: index.html, mutation.json, summary.md, survivors.tsv)
 *   npm run mutation -- run --incremental    # reuse out/mutation/stryker-incremental.json: only changed mutants and tests run again
 *   npm run mutation -- changed [--base REV] # the mutants in lines changed since REV (default HEAD~1), for CI (out/mutation/changed/)
 *   npm run mutation -- summary [DIR]        # summary.md, survivors.tsv and scores.json again from DIR/mutation.json
 *   npm run mutation -- partial [DIR]        # a run stopped early: DIR/mutants.jsonl (every verdict so far) -> DIR/partial/ (report and summary)
 *   npm run mutation -- plan --count N       # the shard split: N slices of the mutated files, balanced by mutant count
 *   npm run mutation -- shard [--index I] --count N   # one slice (I defaults to JOB_COMPLETION_INDEX, a Kubernetes Indexed Job's)
 *   npm run mutation -- collect LOG... [--out DIR]     # pod logs of `shard --emit` -> shard directories (the Kubernetes Job's results)
 *   npm run mutation -- merge DIR... [--out DIR]       # shard reports -> one report (mutation.json, index.html, summary.md)
 *   npm run mutation -- compare A.json B.json          # verdicts mutant by mutant; exit 1 when any differs
 *
 * Every run is niced (the machine is shared) and prints its wall and CPU time. HCS_MUTATION_CONCURRENCY sets the
 * test-runner processes (default 2).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import mutateJson from './mutate.json' with { type: 'json' };
import { PROGRESS_FILE } from './progress-reporter.js';
import { compareVerdicts, mergeReports, partialReport, readReport, reportHtml, scoresOf, summaryMarkdown, survivorsOf, testNames, type ReportJson } from './report.js';
import { changedMutateEntries, mutantCounts, mutatedFiles, splitBalanced } from './select.js';

const MUTATE: string[] = mutateJson.mutate;
const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const OUT = join(ROOT, 'out/mutation');

export interface RunStats {
  wallS: number;
  cpuS: number;
  exit: number | string;
}

/** `stryker run` with these env overrides and flags, niced; its output goes to `log` (and the console when verbose). */
export async function stryker(env: Record<string, string>, flags: string[], log: string, verbose = true): Promise<RunStats> {
  mkdirSync(join(log, '..'), { recursive: true });
  const t0 = performance.now();
  const bin = join(ROOT, 'node_modules/@stryker-mutator/core/bin/stryker.js');
  const exit = await new Promise<number | string>((done) => {
    // `time -f` is not everywhere: the children's CPU comes from /proc via `bash -c 'times'` after the run.
    const child = spawn('bash', ['-c', 'nice -n 10 node "$0" run "$@"; rc=$?; times >&2; exit $rc', bin, ...flags], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    const take = (b: Buffer): void => {
      chunks.push(b);
      if (verbose) process.stdout.write(b);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', (e) => done(e.message));
    child.on('exit', (c) => {
      writeFileSync(log, Buffer.concat(chunks));
      done(c ?? 'killed');
    });
  });
  const wallS = (performance.now() - t0) / 1000;
  return { wallS, cpuS: childCpu(readFileSync(log, 'utf8')), exit };
}

/** The children's user + system seconds from bash's `times` (its second line: "0m12.3s 0m1.2s"). */
export function childCpu(log: string): number {
  const lines = log.trimEnd().split('\n');
  const m = /^(\d+)m([\d.]+)s (\d+)m([\d.]+)s$/.exec(lines[lines.length - 1] ?? '');
  return m ? Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) * 60 + Number(m[4]) : Number.NaN;
}

/** summary.md, survivors.tsv and scores.json beside `dir`/mutation.json. */
export function writeSummary(dir: string, title: string, stats?: RunStats): ReportJson {
  const report = readReport(join(dir, 'mutation.json'));
  const timing = stats ? `\nWall time ${stats.wallS.toFixed(0)} s, CPU ${Number.isNaN(stats.cpuS) ? '?' : stats.cpuS.toFixed(0)} s (Stryker and its test runners).\n` : '';
  writeFileSync(join(dir, 'summary.md'), summaryMarkdown(report, title) + timing);
  const surv = survivorsOf(report, testNames(report));
  writeFileSync(join(dir, 'survivors.tsv'), ['file\tline\tcolumn\tmutator\toriginal\treplacement\tscenarios', ...surv.map((v) => [v.file, v.line, v.column, v.mutator, v.original, v.replacement, v.coveredBy.join(',')].join('\t'))].join('\n') + '\n');
  const s = scoresOf(report);
  writeFileSync(join(dir, 'scores.json'), JSON.stringify({ ...s, ...(stats ? { wallS: stats.wallS, cpuS: stats.cpuS } : {}) }, null, 2));
  return report;
}

function printScores(report: ReportJson): void {
  const s = scoresOf(report);
  const row = (k: string, c: (typeof s)['total']): string =>
    `  ${k.padEnd(32)} ${String(c.mutants).padStart(6)} ${String(c.killed).padStart(6)} ${String(c.timeout).padStart(7)} ${String(c.survived).padStart(8)} ${String(c.noCoverage).padStart(7)} ${c.score.toFixed(1).padStart(6)} %`;
  console.log(`  ${'folder'.padEnd(32)} mutants killed timeout survived no-cov  score`);
  for (const [d, c] of s.folders) console.log(row(d, c));
  console.log(row('total', s.total));
}

function opt(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

/** The shard split of the mutated files (HCS_MUTATE's globs when set, as stryker.config.mjs) into `count` slices. */
export async function shardPlan(count: number): Promise<string[][]> {
  const globs = process.env.HCS_MUTATE ? process.env.HCS_MUTATE.split(',').map((x) => x.trim()).filter(Boolean) : MUTATE;
  const files = mutatedFiles(ROOT, globs);
  return splitBalanced(await mutantCounts(ROOT, files), count);
}

async function main(argv: string[]): Promise<number> {
  const [cmd = 'help', ...args] = argv;
  switch (cmd) {
    case 'run': {
      const incremental = args.includes('--incremental');
      const stats = await stryker({}, incremental ? ['--incremental'] : ['--force'], join(OUT, 'stryker.log'));
      if (!existsSync(join(OUT, 'mutation.json'))) return fail(`stryker wrote no report (exit ${stats.exit}; see out/mutation/stryker.log)`);
      const report = writeSummary(OUT, incremental ? 'Mutation testing (incremental run)' : 'Mutation testing (full run)', stats);
      printScores(report);
      console.log(`  wall ${stats.wallS.toFixed(0)} s, CPU ${stats.cpuS.toFixed(0)} s; report: out/mutation/index.html, survivors: out/mutation/survivors.tsv`);
      return stats.exit === 0 ? 0 : 1;
    }
    case 'changed': {
      const base = opt(args, '--base') ?? process.env.HCS_MUTATION_BASE ?? 'HEAD~1';
      const entries = changedMutateEntries(ROOT, base, MUTATE);
      if (entries.length === 0) {
        console.log(`mutation (changed since ${base}): no mutated code changed; nothing to run`);
        return 0;
      }
      const dir = join(OUT, 'changed');
      console.log(`mutation (changed since ${base}): ${entries.join(' ')}`);
      const stats = await stryker({ HCS_MUTATE: entries.join(','), HCS_MUTATION_OUT: dir }, ['--force'], join(dir, 'stryker.log'));
      if (!existsSync(join(dir, 'mutation.json'))) return fail(`stryker wrote no report (exit ${stats.exit}; see ${dir}/stryker.log)`);
      const report = writeSummary(dir, `Mutation testing of the lines changed since ${base}`, stats);
      printScores(report);
      const surv = survivorsOf(report, testNames(report));
      for (const v of surv) console.log(`  SURVIVED ${v.file}:${v.line}:${v.column} ${v.mutator}: ${v.original} -> ${v.replacement}`);
      console.log(`  wall ${stats.wallS.toFixed(0)} s, CPU ${stats.cpuS.toFixed(0)} s; ${surv.length} survivor(s): classify or kill them (docs/scenarios.md "Mutation survivors")`);
      return stats.exit === 0 ? 0 : 1;
    }
    case 'summary': {
      const dir = resolve(args[0] ?? OUT);
      printScores(writeSummary(dir, 'Mutation testing'));
      return 0;
    }
    case 'partial': {
      const dir = resolve(args[0] ?? OUT);
      const report = partialReport(ROOT, readFileSync(join(dir, PROGRESS_FILE), 'utf8'));
      const outDir = join(dir, 'partial');
      mkdirSync(outDir, { recursive: true });
      writeFileSync(join(outDir, 'mutation.json'), JSON.stringify(report));
      writeFileSync(join(outDir, 'index.html'), reportHtml(report));
      printScores(writeSummary(outDir, `Mutation testing (partial: the ${Object.values(report.files).reduce((n, f) => n + f.mutants.length, 0)} mutants tested before the run stopped)`));
      console.log(`  partial report: ${outDir}/index.html`);
      return 0;
    }
    case 'plan': {
      const count = Number(opt(args, '--count') ?? 0);
      const plan = await shardPlan(count);
      plan.forEach((files, i) => console.log(`shard ${i}: ${files.join(' ')}`));
      return 0;
    }
    case 'shard': {
      const count = Number(opt(args, '--count') ?? process.env.HCS_MUTATION_SHARDS ?? 0);
      const index = Number(opt(args, '--index') ?? process.env.JOB_COMPLETION_INDEX ?? Number.NaN);
      if (!Number.isInteger(index) || index < 0 || index >= count) return fail(`shard: --index (or JOB_COMPLETION_INDEX) must be 0..${count - 1}, got ${index}`);
      const files = (await shardPlan(count))[index]!;
      const dir = join(OUT, `shard-${index}`);
      console.log(`shard ${index}/${count}: ${files.join(' ')}`);
      const stats = await stryker({ HCS_MUTATE: files.join(','), HCS_MUTATION_OUT: dir }, ['--force', '--reporters', 'json,progress-append-only,hcs-progress'], join(dir, 'stryker.log'), !args.includes('--emit'));
      if (!existsSync(join(dir, 'mutation.json'))) return fail(`shard ${index}: stryker wrote no report (exit ${stats.exit})`);
      const report = readReport(join(dir, 'mutation.json'));
      console.log(`shard ${index}: ${scoresOf(report).total.mutants} mutants in ${stats.wallS.toFixed(0)} s wall, ${stats.cpuS.toFixed(0)} s CPU`);
      writeFileSync(join(dir, 'stats.json'), JSON.stringify({ index, count, files, ...stats }));
      // --emit: the report on stdout between markers (gzip + base64), so `kubectl logs` carries it off a finished pod
      // without shared storage (test/mutation/k8s/run.sh collects it).
      if (args.includes('--emit')) {
        const blob = gzipSync(JSON.stringify({ stats: { index, count, files, ...stats }, report }), { level: 9 }).toString('base64');
        console.log(`-----BEGIN HCS MUTATION SHARD ${index}-----`);
        for (let i = 0; i < blob.length; i += 76) console.log(blob.slice(i, i + 76));
        console.log(`-----END HCS MUTATION SHARD ${index}-----`);
      }
      return stats.exit === 0 ? 0 : 1;
    }
    case 'collect': {
      // Pod logs (kubectl logs of each index) with a shard's report between the markers -> shard directories.
      const outDir = resolve(opt(args, '--out') ?? join(OUT, 'shards'));
      const logs = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--out');
      const dirs: string[] = [];
      for (const file of logs) {
        const text = readFileSync(file, 'utf8');
        const m = /-----BEGIN HCS MUTATION SHARD (\d+)-----\n([\s\S]*?)\n-----END HCS MUTATION SHARD \1-----/.exec(text);
        if (!m) return fail(`collect: ${file} holds no shard report (did the pod finish? its log's end: ${JSON.stringify(text.slice(-300))})`);
        const { stats, report } = JSON.parse(gunzipSync(Buffer.from(m[2]!.replace(/\s+/g, ''), 'base64')).toString('utf8')) as { stats: unknown; report: ReportJson };
        const dir = join(outDir, `shard-${m[1]}`);
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, 'mutation.json'), JSON.stringify(report));
        writeFileSync(join(dir, 'stats.json'), JSON.stringify(stats));
        dirs.push(dir);
      }
      console.log(dirs.join('\n'));
      return 0;
    }
    case 'merge': {
      const outDir = resolve(opt(args, '--out') ?? join(OUT, 'merged'));
      const dirs = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--out');
      if (dirs.length === 0) return fail('merge: name the shard directories (each with a mutation.json)');
      const merged = mergeReports(dirs.map((d) => readReport(join(resolve(d), 'mutation.json'))));
      mkdirSync(outDir, { recursive: true });
      writeFileSync(join(outDir, 'mutation.json'), JSON.stringify(merged));
      writeFileSync(join(outDir, 'index.html'), reportHtml(merged));
      writeSummary(outDir, `Mutation testing (merged from ${dirs.length} shards)`);
      printScores(merged);
      console.log(`  merged report: ${outDir}/index.html`);
      return 0;
    }
    case 'compare': {
      const [a, b] = args;
      if (!a || !b) return fail('compare: name two mutation.json reports');
      const d = compareVerdicts(readReport(a), readReport(b));
      console.log(`verdicts: ${d.same} the same, ${d.differ.length} different, ${d.onlyA.length} only in ${a}, ${d.onlyB.length} only in ${b}`);
      for (const [k, x, y] of d.differ.slice(0, 50)) console.log(`  ${k}: ${x} vs ${y}`);
      for (const k of d.onlyA.slice(0, 20)) console.log(`  only in ${a}: ${k}`);
      for (const k of d.onlyB.slice(0, 20)) console.log(`  only in ${b}: ${k}`);
      return d.differ.length || d.onlyA.length || d.onlyB.length ? 1 : 0;
    }
    default:
      console.log(readFileSync(fileURLToPath(import.meta.url), 'utf8').split('*/')[0]!.replace(/^\/\*\*\n/, '').replace(/^ \* ?/gm, ''));
      return cmd === 'help' ? 0 : 2;
  }
}

function fail(msg: string): number {
  console.error(`mutation: ${msg}`);
  return 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2));
}
