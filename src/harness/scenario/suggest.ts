/** "did you mean" suggestions for misspelt names (fields, checks, phases, operations, controllers). */

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours ("wiat" → "wait" is 1). */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The candidate nearest to `word` (case-insensitive edit distance), when it is near enough to be a typo. */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = c.toLowerCase() === w ? 0 : distance(w, c.toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  const limit = Math.max(1, Math.min(3, Math.floor(word.length / 3)));
  return best !== undefined && bestD <= limit ? best : undefined;
}

/** ` (did you mean "X"?)` or, with no near candidate, ` (known: a, b, c)`. */
export function didYouMean(word: string, candidates: readonly string[], what = 'known'): string {
  const n = nearest(word, candidates);
  return n !== undefined ? ` (did you mean "${n}"?)` : ` (${what}: ${candidates.join(', ')})`;
}
