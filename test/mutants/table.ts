/** The kill table: one line per mutant, then the totals (test/mutants/cli.ts and bench/mutants.ts print it). */
import type { Row } from './types.js';

export interface Totals {
  mutants: number;
  library: number;
  explore: number;
  /** Survivors documented as equivalent (Mutant.equivalent) and survivors without a reason. */
  equivalent: number;
  /** Survivors documented as gaps (Mutant.needs: the check that would kill them). */
  gaps: number;
  unexplained: number;
  /** Mutants documented as equivalent that were killed all the same (the reason is out of date). */
  killedEquivalent: number;
  broken: number;
  wallMs: number;
}

export function totals(rows: readonly Row[], wallMs: number): Totals {
  const survivors = rows.filter((r) => !r.kill && !r.broken);
  return {
    mutants: rows.length,
    library: rows.filter((r) => r.kill?.stage === 'library').length,
    explore: rows.filter((r) => r.kill?.stage === 'explore').length,
    equivalent: survivors.filter((r) => r.mutant.equivalent).length,
    gaps: survivors.filter((r) => !r.mutant.equivalent && r.mutant.needs).length,
    unexplained: survivors.filter((r) => !r.mutant.equivalent && !r.mutant.needs).length,
    killedEquivalent: rows.filter((r) => r.kill && (r.mutant.equivalent || r.mutant.needs)).length,
    broken: rows.filter((r) => r.broken).length,
    wallMs,
  };
}

function killedBy(r: Row, compact: boolean): string {
  if (r.broken) return `BROKEN: ${r.broken}`;
  const k = r.kill;
  if (!k && compact) return r.mutant.equivalent ? 'survived: equivalent (reason below)' : r.mutant.needs ? 'survived: gap (the check it needs below)' : 'SURVIVED (unexplained)';
  if (!k) return r.mutant.equivalent ? `survived (equivalent: ${r.mutant.equivalent})` : r.mutant.needs ? `survived (gap; needs: ${r.mutant.needs})` : 'SURVIVED (unexplained)';
  const where = k.step !== undefined ? `step ${k.step}${k.title ? ` "${k.title.length > 60 ? `${k.title.slice(0, 57)}...` : k.title}"` : ''}` : 'run';
  const seed = k.stage === 'explore' ? `, explore run ${k.run} seed ${k.seed}${k.schedule?.length ? ` [${k.schedule.join('; ')}]` : ''}` : k.seed ? `, seed ${k.seed}` : '';
  return `${k.scenario.replace(/^scenarios\//, '')}, ${where}, ${k.rules.length ? k.rules.join(',') : 'no rule named'}${seed}`;
}

/** The table as text lines (markdown-compatible pipes); `compact` leaves the survivors' reasons out (listed apart). */
export function formatTable(rows: readonly Row[], wallMs: number, compact = false): string[] {
  const out = ['| # | mutant | killed by (scenario, step, rule) | stage | runs | time |', '|---|---|---|---|---|---|'];
  rows.forEach((r, i) => {
    const stage = r.kill ? r.kill.stage : r.broken ? '-' : 'survivor';
    out.push(`| ${i + 1} | ${r.mutant.id} | ${killedBy(r, compact).replace(/\|/g, '\\|')} | ${stage} | ${r.libraryRuns}+${r.exploreRuns} | ${(r.wallMs / 1000).toFixed(1)} s |`);
  });
  const t = totals(rows, wallMs);
  out.push('');
  out.push(
    `${t.mutants} mutants: ${t.library} killed by the library, ${t.explore} by explore, ${t.equivalent + t.gaps + t.unexplained} survivors (${t.equivalent} documented equivalent, ${t.gaps} documented gaps with the check that would kill them, ${t.unexplained} unexplained)` +
      `${t.broken ? `, ${t.broken} BROKEN (patch no longer applies)` : ''}${t.killedEquivalent ? `, ${t.killedEquivalent} documented as equivalent or a gap but killed (out of date)` : ''}; wall time ${(wallMs / 1000).toFixed(1)} s`,
  );
  return out;
}
