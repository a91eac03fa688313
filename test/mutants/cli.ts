/**
 * The mutant catalogue's kill table from the command line:
 *
 *   npx tsx test/mutants/cli.ts [--jobs N] [--only id,id] [--explore-runs N] [--seeds N] [--no-control] [--json FILE]
 *
 * First a control run (the library on the unmutated system: it must pass, or
 * every "kill" would mean nothing), then every mutant (test/mutants/runner.ts),
 * then the table. Exit code 1 when a survivor is unexplained, a mutant is
 * broken or the control run fails. `npm run bench -- mutants` prints the same
 * table as a bench figure (bench/mutants.ts).
 */
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { CATALOGUE, selectMutants } from './catalogue.js';
import { CONTROL, runCatalogue, type CatalogueOptions } from './runner.js';
import { formatTable, totals } from './table.js';
import type { Row } from './types.js';

export interface CliResult {
  rows: Row[];
  wallMs: number;
  control?: Row;
  lines: string[];
  ok: boolean;
}

function flag(argv: string[], name: string): string | undefined {
  const i = argv.findIndex((a) => a === name || a.startsWith(`${name}=`));
  if (i < 0) return undefined;
  const a = argv[i]!;
  return a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[i + 1];
}

function count(argv: string[], name: string, dflt: number): number {
  const v = flag(argv, name);
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name}: expected a whole number, got ${JSON.stringify(v)}`);
  return n;
}

export const USAGE = `Usage: npx tsx test/mutants/cli.ts [--jobs N] [--only id,id] [--explore-runs N] [--seeds N] [--no-control] [--json FILE]

Applies each catalogued mutant (a realistic provider, guest or Cluster API bug;
test/mutants/catalogue*.ts) in its own worker, runs the scenario library and then an
explore budget against it, and prints the kill table: mutant | killed by (scenario,
step, rule) | stage | runs | time. First a control run (the unmutated library must pass).

  --jobs N           mutants run at once (default 2)
  --only id,id       only these mutants (ids as in the table, e.g. capi/machine-skips-drain)
  --explore-runs N   explore runs after the library for a survivor (default 40; 0: none)
  --seeds N          seeds per library scenario (default 1)
  --no-control       skip the control run
  --json FILE        also write the rows and totals as JSON
  -h, --help         this text

Exit codes: 0 every survivor documented, 1 an unexplained survivor, a broken
mutant or a failing control run, 2 bad usage. A full pass is ~13 min with --jobs 2
--explore-runs 15 on 2 cores (docs/scenarios.md "The kill table").`;

const FLAGS = new Set(['--jobs', '--only', '--explore-runs', '--seeds', '--json']);

/** The first argument that is no known flag (or value of one), for a usage error. */
export function unknownArgument(argv: string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const name = a.includes('=') ? a.slice(0, a.indexOf('=')) : a;
    if (a === '--no-control') continue;
    if (FLAGS.has(name)) {
      if (!a.includes('=')) i++;
      continue;
    }
    return a;
  }
  return undefined;
}

export async function runMutantsCli(argv: string[], log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Promise<CliResult> {
  const only = flag(argv, '--only');
  const mutants = only ? selectMutants(only.split(',').map((s) => s.trim()).filter(Boolean)) : [...CATALOGUE];
  const o: Omit<CatalogueOptions, 'mutants'> = {
    jobs: Math.max(1, count(argv, '--jobs', 2)),
    seeds: Math.max(1, count(argv, '--seeds', 1)),
    exploreRuns: count(argv, '--explore-runs', 40),
    log,
  };
  let control: Row | undefined;
  if (!argv.includes('--no-control')) {
    log('mutants: control run (the library on the unmutated system)…');
    control = (await runCatalogue({ ...o, mutants: [CONTROL], exploreRuns: 0 })).rows[0]!;
    if (control.kill || control.broken) {
      const lines = [`control run FAILED: ${control.broken ?? `${control.kill!.scenario} step ${control.kill!.step ?? '?'}: ${control.kill!.error.split('\n')[0]}`} — kills against a failing library mean nothing`];
      return { rows: [], wallMs: control.wallMs, control, lines, ok: false };
    }
    log(`mutants: control run passed (${control.libraryRuns} library runs, ${(control.wallMs / 1000).toFixed(1)} s)`);
  }
  const { rows, wallMs } = await runCatalogue({ ...o, mutants });
  const lines = formatTable(rows, wallMs);
  if (control) lines.push(`control run (unmutated): ${control.libraryRuns} library runs passed in ${(control.wallMs / 1000).toFixed(1)} s`);
  const t = totals(rows, wallMs);
  const file = flag(argv, '--json');
  if (file) writeFileSync(file, JSON.stringify({ totals: t, control: control ?? null, rows }, null, 2) + '\n');
  return { rows, wallMs, ...(control ? { control } : {}), lines, ok: t.unexplained === 0 && t.broken === 0 };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const argv = process.argv.slice(2);
  if (argv.includes('-h') || argv.includes('--help')) {
    console.log(USAGE);
    process.exit(0);
  }
  const bad = unknownArgument(argv);
  if (bad !== undefined) {
    console.error(`error: unknown argument ${JSON.stringify(bad)}\n\n${USAGE}`);
    process.exit(2);
  }
  const r = await runMutantsCli(argv);
  console.log(r.lines.join('\n'));
  process.exit(r.ok ? 0 : 1);
}
