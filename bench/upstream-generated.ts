/**
 * `npm run bench -- upstream-generated` (issue 26): generated rollouts
 * (src/harness/explore/rollouts.ts) on the upstream Cluster API v1.10.10 managers
 * and on the model, all against one kube-apiserver + managers, compared by
 * verdict and shape (test/upstream/differential.ts, sequences.ts). Prints
 * how many of them are equal and the wall time; a difference is shrunk with
 * ddmin (at most BENCH_UPSTREAM_GENERATED_SHRINK upstream runs, default 8)
 * and written as a scenario under out/upstream-generated/.
 *
 * In a network namespace with only lo (the managers' webhook servers bind
 * every interface):
 *   unshare -n sh -c 'ip link set lo up && exec npm run bench -- upstream-generated'
 * BENCH_UPSTREAM_GENERATED_N (default 20), BENCH_UPSTREAM_GENERATED_SEED (first
 * seed, default 2601), BENCH_UPSTREAM_GENERATED_SPEED (default 20). Without the
 * binaries it runs the model side only and says why.
 */
import { resolve } from 'node:path';
import { describeRollout, generateRollout } from '../src/harness/explore/rollouts.js';
import { openBackend } from '../src/harness/realcluster/backends.js';
import { embeddedTestbedFactory } from '../src/harness/testbed/index.js';
import { upstreamProblem } from '../src/harness/realcluster/upstream/upstream.js';
import { compareRollout, shrinkDifference } from '../test/upstream/differential.js';
import type { BenchResult } from './scale.js';

export async function benchUpstreamGenerated(): Promise<BenchResult[]> {
  const n = Number(process.env.BENCH_UPSTREAM_GENERATED_N ?? 20);
  const seed0 = Number(process.env.BENCH_UPSTREAM_GENERATED_SEED ?? 2601);
  const speed = Number(process.env.BENCH_UPSTREAM_GENERATED_SPEED ?? 20);
  const maxShrink = Number(process.env.BENCH_UPSTREAM_GENERATED_SHRINK ?? 8);
  const dir = resolve('out/upstream-generated');
  const problem = upstreamProblem();
  const t0 = performance.now();
  const backend = problem ? undefined : await openBackend({ backend: 'apiserver', capi: 'upstream', speed });
  const other = backend?.factory ?? embeddedTestbedFactory();
  const out: BenchResult[] = [];
  let equal = 0;
  let upstreamWall = 0;
  try {
    for (let seed = seed0; seed < seed0 + n; seed++) {
      const g = generateRollout(seed);
      const c = await compareRollout(g, dir, embeddedTestbedFactory(), other, undefined, !backend);
      upstreamWall += c.other.result.wallMs;
      const verdict = c.model.result.ok ? 'pass' : 'FAIL';
      if (c.differences.length === 0) equal++;
      let note = `${describeRollout(g)}; ${verdict} on both; groups ${c.model.shape.groups.join(' ')}${c.notes.length ? `; ${c.notes.join('; ')}` : ''}`;
      if (c.differences.length) {
        note = `${describeRollout(g)}; DIFFERS: ${c.differences.join('; ')}`;
        if (backend && maxShrink > 0) {
          const s = await shrinkDifference(c, dir, embeddedTestbedFactory(), other, maxShrink, false);
          note += `; shrunk (${s.tests} runs) to ${describeRollout(s.rollout)}: ${s.file}`;
        }
      }
      out.push({ name: `seed ${seed}`, value: c.other.result.wallMs / 1000, unit: `s wall ${backend ? 'upstream' : 'model (no upstream)'}`, note });
      process.stdout.write(`  seed ${seed}: ${c.differences.length ? 'DIFFERS' : 'equal'} (${(c.other.result.wallMs / 1000).toFixed(1)} s)\n`);
    }
  } finally {
    await backend?.close();
  }
  const wall = (performance.now() - t0) / 1000;
  out.push({
    name: `generated rollouts equal on ${backend ? 'upstream v1.10.10 and the model' : 'the model against itself (upstream skipped)'}`,
    value: equal,
    unit: `of ${n}`,
    note: `${wall.toFixed(0)} s wall in all (speed ${speed}), upstream runs ${(upstreamWall / 1000).toFixed(0)} s${problem ? `; upstream skipped: ${problem}` : ''}`,
  });
  return out;
}
