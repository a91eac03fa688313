/**
 * The seed sweep (`hcs-testbed run --seeds N`, issue 22): each scenario runs on
 * N seeds derived from its own `seed:` — the first is that seed itself, the
 * others follow from it deterministically, so a sweep is the same on every
 * machine and a failing seed replays with `--seed <it>` alone.
 */
import type { Scenario } from './types.js';

/** Largest seed the testbed's RNG takes (a positive 31-bit integer). */
const SEED_MOD = 2_147_483_647;

/** N seeds for a scenario whose seed is `seed`: `seed` first, then a fixed integer mix of (seed, i). */
export function sweepSeeds(seed: number, n: number): number[] {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`seeds: must be an integer >= 1, got ${n}`);
  const out = [seed];
  for (let i = 1; i < n; i++) {
    // splitmix32-style finaliser of (seed, i): well spread, and no two i of one seed collide in practice.
    let x = (Math.imul(seed | 0, 0x9e3779b1) + Math.imul(i, 0x85ebca6b)) >>> 0;
    x = Math.imul(x ^ (x >>> 16), 0x7feb352d) >>> 0;
    x = Math.imul(x ^ (x >>> 15), 0x846ca68b) >>> 0;
    x = (x ^ (x >>> 16)) >>> 0;
    let s = (x % SEED_MOD) + 1;
    while (out.includes(s)) s = (s % SEED_MOD) + 1;
    out.push(s);
  }
  return out;
}

/**
 * The scenarios of a sweep: each scenario on each of its seeds, in order. The
 * first keeps its name; the others are named `<name>@seed-<seed>` (reports
 * are written per name).
 */
export function sweep(scenarios: readonly Scenario[], n: number): Scenario[] {
  return scenarios.flatMap((s) => sweepSeeds(s.seed, n).map((seed, i) => (i === 0 ? s : { ...s, name: `${s.name}@seed-${seed}`, seed })));
}
