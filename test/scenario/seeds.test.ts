/** The seed sweep of `hcs-testbed run --seeds N` (src/harness/scenario/seeds.ts). */
import { describe, expect, it } from 'vitest';
import { sweep, sweepSeeds } from '../../src/harness/scenario/seeds.js';
import type { Scenario } from '../../src/harness/scenario/types.js';

describe('seed sweep', () => {
  it('starts with the scenario\'s own seed, derives the rest from it alone, all distinct and valid', { timeout: 10_000 }, () => {
    const a = sweepSeeds(42, 8);
    expect(a[0]).toBe(42);
    expect(sweepSeeds(42, 8)).toEqual(a);
    expect(new Set(a).size).toBe(8);
    for (const s of a) expect(Number.isInteger(s) && s >= 1 && s <= 2_147_483_647).toBe(true);
    expect(sweepSeeds(43, 8).slice(1)).not.toEqual(a.slice(1));
    expect(sweepSeeds(42, 3)).toEqual(a.slice(0, 3));
    expect(() => sweepSeeds(42, 0)).toThrow(/seeds: must be an integer >= 1/);
  });

  it('runs each scenario on each seed, the first under its own name', { timeout: 10_000 }, () => {
    const s = { name: 'x', seed: 7 } as Scenario;
    const out = sweep([s], 3);
    expect(out.map((x) => x.seed)).toEqual(sweepSeeds(7, 3));
    expect(out.map((x) => x.name)).toEqual(['x', `x@seed-${out[1]!.seed}`, `x@seed-${out[2]!.seed}`]);
  });
});
