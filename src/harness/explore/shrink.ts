/**
 * Delta debugging (Zeller's ddmin) of a failing schedule to a 1-minimal one:
 * removing any single remaining item makes the failure go away. Candidates
 * of one round are tested together (in parallel on the pool) and the first
 * failing one in a fixed order wins, so the result does not depend on which
 * worker answers first.
 */
export type FailsBatch<T> = (candidates: T[][]) => Promise<boolean[]>;

export interface ShrinkStats {
  tests: number;
}

export async function ddmin<T>(items: readonly T[], fails: FailsBatch<T>, stats: ShrinkStats = { tests: 0 }): Promise<T[]> {
  let cur = [...items];
  // The empty schedule first: a failure of the scenario alone needs no fault at all.
  stats.tests++;
  if ((await fails([[]]))[0]) return [];
  let n = 2;
  while (cur.length >= 2) {
    const size = Math.ceil(cur.length / n);
    const chunks: T[][] = [];
    for (let i = 0; i < cur.length; i += size) chunks.push(cur.slice(i, i + size));
    const complements = chunks.length > 2 ? chunks.map((_, i) => chunks.filter((__, j) => j !== i).flat()) : [];
    const candidates = [...chunks, ...complements];
    stats.tests += candidates.length;
    const verdicts = await fails(candidates);
    const hit = verdicts.findIndex(Boolean);
    if (hit >= 0 && hit < chunks.length) {
      cur = chunks[hit]!;
      n = 2;
      continue;
    }
    if (hit >= chunks.length) {
      cur = complements[hit - chunks.length]!;
      n = Math.max(n - 1, 2);
      continue;
    }
    if (n >= cur.length) break;
    n = Math.min(cur.length, n * 2);
  }
  return cur;
}
