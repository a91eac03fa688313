/**
 * The generator of rollouts (src/harness/explore/rollouts.ts, issue 26): pure in the
 * seed, only pacing-independent interleavings, and scenarios the loader
 * accepts. Running them is test/upstream/sequences.test.ts's and
 * rollouts.test.ts's job.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { flatten, generateRollout, POOL_ENTRIES, rolloutScenario, subset } from '../../src/harness/explore/rollouts.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { writeRolloutScenario } from '../upstream/differential.js';

const SEEDS = Array.from({ length: 60 }, (_, i) => 2601 + i);

describe('generateRollout', () => {
  it('is a function of the seed', () => {
    expect(generateRollout(2601)).toEqual(generateRollout(2601));
    expect(JSON.stringify(rolloutScenario(generateRollout(2602)))).toBe(JSON.stringify(rolloutScenario(generateRollout(2602))));
    expect(new Set(SEEDS.map((s) => JSON.stringify(generateRollout(s).phases))).size).toBeGreaterThan(50);
  });

  it('covers every operation and fault over 60 seeds', () => {
    const seen = new Set(SEEDS.flatMap((s) => generateRollout(s).phases.flat().map((o) => (o.op === 'fault' ? `fault:${o.fault}` : o.op))));
    expect([...seen].sort()).toEqual(['annotateDelete', 'fault:detachTimeout', 'fault:slowDelete', 'fault:stuckCreate', 'pause', 'resume', 'scale', 'strategy', 'template', 'version'].sort());
  });

  it('a pause is the first operation of its phase, every pause is resumed, one version change at most, replicas + surge within the pool', () => {
    for (const s of SEEDS) {
      const g = generateRollout(s);
      let paused = false;
      let surge = g.initial.maxSurge;
      let replicas = g.initial.replicas;
      for (const p of g.phases) {
        p.forEach((o, i) => {
          if (o.op === 'pause') expect(i, `seed ${s}`).toBe(0);
          if (o.op === 'pause') paused = true;
          if (o.op === 'resume') paused = false;
          if (o.op === 'strategy') surge = o.maxSurge;
          if (o.op === 'scale') replicas = o.replicas;
          expect(replicas + surge, `seed ${s}`).toBeLessThanOrEqual(POOL_ENTRIES);
        });
      }
      expect(paused, `seed ${s} ends paused`).toBe(false);
      expect(g.phases.flat().filter((o) => o.op === 'version').length).toBeLessThanOrEqual(1);
    }
  });

  it('subset keeps the chosen operations, splits a phase before a pause, and resumes at the end', () => {
    const g = generateRollout(2605);
    const { ops } = flatten(g);
    expect(flatten(subset(g, ops.map((_, i) => i))).ops).toEqual(ops);
    expect(subset(g, []).phases).toEqual([]);
    const withPause = { ...g, phases: [[{ op: 'scale' as const, replicas: 2 }, { op: 'scale' as const, replicas: 3 }], [{ op: 'pause' as const }, { op: 'scale' as const, replicas: 1 }]] };
    expect(subset(withPause, [0, 2, 3]).phases).toEqual([[{ op: 'scale', replicas: 2 }], [{ op: 'pause' }, { op: 'scale', replicas: 1 }], [{ op: 'resume' }]]);
  });

  it('every generated scenario loads (steps, checks, faults, manifests)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hcs-rollouts-'));
    for (const s of SEEDS.slice(0, 20)) {
      const sc = loadScenario(writeRolloutScenario(generateRollout(s), dir));
      expect(sc.steps.filter((x) => x.kind === 'wait').length).toBe(generateRollout(s).phases.length + 1);
    }
  });
});
