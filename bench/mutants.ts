/**
 * The mutant catalogue's kill table (issue 22, test/mutants/): every
 * catalogued mutant of the provider, the guest and the Cluster API model
 * against the scenario library, then an explore budget on its own scenario
 * for the library's survivors. Prints the table, returns the totals.
 *
 *   npm run bench -- mutants
 *   BENCH_MUTANTS_JOBS=2 BENCH_MUTANTS_EXPLORE_RUNS=40 BENCH_MUTANTS_SEEDS=1 BENCH_MUTANTS_ONLY=id,id npm run bench -- mutants
 *
 * Several minutes of two cores: the library (~15 runs) for every survivor.
 */
import { loadavg } from 'node:os';
import { runMutantsCli } from '../test/mutants/cli.js';
import { totals } from '../test/mutants/table.js';
import type { BenchResult } from './library.js';

export async function benchMutants(): Promise<BenchResult[]> {
  const env = process.env;
  const argv = [
    '--jobs', env.BENCH_MUTANTS_JOBS ?? '2',
    '--explore-runs', env.BENCH_MUTANTS_EXPLORE_RUNS ?? '40',
    '--seeds', env.BENCH_MUTANTS_SEEDS ?? '1',
    ...(env.BENCH_MUTANTS_ONLY ? ['--only', env.BENCH_MUTANTS_ONLY] : []),
  ];
  const r = await runMutantsCli(argv, env.BENCH_VERBOSE ? (l) => console.log(`  ${l}`) : () => undefined);
  for (const l of r.lines) console.log(`  ${l}`);
  if (!r.rows.length) throw new Error(r.lines[0] ?? 'no mutant ran');
  const t = totals(r.rows, r.wallMs);
  const note = `jobs ${argv[1]}, explore ${argv[3]} runs per library survivor, load ${loadavg()[0]!.toFixed(1)}`;
  return [
    { name: 'mutants: catalogued', value: t.mutants, unit: 'mutants' },
    { name: 'mutants: killed by the library', value: t.library, unit: 'mutants' },
    { name: 'mutants: killed by explore (library survivors)', value: t.explore, unit: 'mutants' },
    { name: 'mutants: survivors documented as equivalent', value: t.equivalent, unit: 'mutants' },
    { name: 'mutants: survivors documented as gaps (the check that would kill them stated)', value: t.gaps, unit: 'mutants' },
    { name: 'mutants: unexplained survivors', value: t.unexplained, unit: 'mutants', note: 'target 0' },
    { name: 'mutants: kill table wall time', value: r.wallMs / 1000, unit: 's wall', note },
    ...(r.control ? [{ name: 'mutants: control (library on one mutant worker)', value: r.control.wallMs / 1000, unit: 's wall' }] : []),
  ];
}
